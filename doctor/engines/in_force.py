"""Which engine the doctor judges, and why: --engine, the server at --engine-url (or the one watch read), the launch config, the model's
format, what is installed.

The report states the engine and the evidence. Where there is none (no --engine, no launch config, no model, no engine
installed but ExLlamaV2 or nothing at all), the engine is ExLlamaV2 *assumed*, and says so: a check that would blame
an engine-specific component then speaks for the likely engines instead of for one.
"""

from __future__ import annotations

from doctor.model.engines import SERVER_ENGINE, SERVER_LABEL, InForce
from doctor.model.facts import Facts
from doctor.model.ids import Engine
from doctor.model.plan import Plan
from doctor.model.unknown import Unknown, known

__all__ = ["BY_FORMAT", "InForce", "in_force"]

BY_FORMAT = {"gguf": Engine.LLAMA_CPP, "exl2": Engine.EXLLAMAV2, "gptq": Engine.EXLLAMAV2, "exl3": Engine.TABBYAPI,
             "bnb-4bit": Engine.TRANSFORMERS, "bnb-8bit": Engine.TRANSFORMERS}


def in_force(plan: Plan, facts: Facts) -> InForce:
    """The engine the checks judge: the first evidence that names one wins."""
    if plan.engine is not None:
        return InForce(Engine(plan.engine), "--engine")
    server = plan.engine_server
    if server is not None and server.engine is not None:
        version = f" {server.version}" if server.version else ""
        return InForce(Engine(server.engine), f"the server at {server.url} (--engine-url) answers as {server.label}{version}")
    watched = facts.samples.server if facts.samples is not None else None
    if watched is not None and watched.kind in SERVER_ENGINE:  # watch --engine-url read it (and replays of that)
        return InForce(SERVER_ENGINE[watched.kind], f"the server at {watched.url} (watch --engine-url) answered as "
                       f"{SERVER_LABEL[watched.kind]}")
    if plan.engine_launch is not None:
        return InForce(Engine(plan.engine_launch.engine), f"the launch config ({plan.engine_launch.source})")
    method = facts.model.quant.method if facts.model is not None and facts.model.quant is not None else None
    engines = facts.engines
    studio = engines is not None and engines.lm_studio.installed and not engines.llama_cpp.installed
    if method == "gguf":
        llama = engines is not None and (engines.llama_cpp.installed or engines.lm_studio.installed)
        if engines is not None and engines.ollama.installed and not llama:
            return InForce(Engine.OLLAMA, "a GGUF model, and Ollama is the GGUF engine installed here")
        if studio:
            return InForce(Engine.LLAMA_CPP, "a GGUF model, and LM Studio's llama.cpp runtime is the GGUF engine installed "
                           "here")
        return InForce(Engine.LLAMA_CPP, "a GGUF model is llama.cpp's format")
    if method in BY_FORMAT:
        return InForce(BY_FORMAT[method], f"the model's format ({method})")
    has_exllamav2 = known(facts.python.packages.get("exllamav2", Unknown("not gathered")))
    if not has_exllamav2 and engines is not None:
        if engines.llama_cpp.installed:
            return InForce(Engine.LLAMA_CPP, "llama.cpp is installed and ExLlamaV2 is not")
        if engines.ollama.installed:
            return InForce(Engine.OLLAMA, "Ollama is installed and ExLlamaV2 is not")
        if studio:
            return InForce(Engine.LLAMA_CPP, "LM Studio (llama.cpp runtimes) is installed and ExLlamaV2 is not")
    if not has_exllamav2 and known(facts.python.packages.get("vllm", Unknown("not gathered"))):
        return InForce(Engine.VLLM, "vLLM is installed and ExLlamaV2 is not")
    if has_exllamav2:
        return InForce(Engine.EXLLAMAV2, "ExLlamaV2 is installed")
    return InForce(Engine.EXLLAMAV2, "no engine named or found (give --engine or --model)", assumed=True)
