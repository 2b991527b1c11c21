"""Which engine the plan runs: --engine, else the launch config's, else the model's format and what is installed."""

from __future__ import annotations

from doctor.model.facts import Facts
from doctor.model.ids import Engine
from doctor.model.plan import Plan
from doctor.model.unknown import Unknown, known

BY_FORMAT = {"gguf": Engine.LLAMA_CPP, "exl2": Engine.EXLLAMAV2, "gptq": Engine.EXLLAMAV2,
             "bnb-4bit": Engine.TRANSFORMERS, "bnb-8bit": Engine.TRANSFORMERS}


def plan_engine(plan: Plan, facts: Facts) -> tuple[Engine, str]:
    """(engine, why it was chosen)."""
    if plan.engine is not None:
        return Engine(plan.engine), "--engine"
    if plan.engine_launch is not None:
        return Engine(plan.engine_launch.engine), f"the launch config ({plan.engine_launch.source})"
    method = facts.model.quant.method if facts.model is not None and facts.model.quant is not None else None
    engines = facts.engines
    if method == "gguf":
        llama = engines is not None and engines.llama_cpp.installed
        if engines is not None and engines.ollama.installed and not llama:
            return Engine.OLLAMA, "a GGUF model, and Ollama is the GGUF engine installed here"
        return Engine.LLAMA_CPP, "a GGUF model is llama.cpp's format"
    if method in BY_FORMAT:
        return BY_FORMAT[method], f"the model's format ({method})"
    if not known(facts.python.packages.get("exllamav2", Unknown("not gathered"))) and engines is not None:
        if engines.llama_cpp.installed:
            return Engine.LLAMA_CPP, "llama.cpp is installed and ExLlamaV2 is not"
        if engines.ollama.installed:
            return Engine.OLLAMA, "Ollama is installed and ExLlamaV2 is not"
    return Engine.EXLLAMAV2, "the doctor's default engine"


def applies(plan: Plan, facts: Facts | None) -> bool:
    """The engine checks run when the plan names an engine or a launch config, or the model is a GGUF."""
    if plan.engine is not None or plan.engine_launch is not None:
        return True
    if plan.model_path and plan.model_path.lower().endswith(".gguf"):
        return True  # chosen before the model's headers are read
    m = facts.model if facts is not None else None
    return m is not None and m.quant is not None and m.quant.method == "gguf"
