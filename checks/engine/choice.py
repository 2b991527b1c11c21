"""When the engine checks run: the plan names an engine or a launch config, the model is a GGUF, or the engine in
force is not ExLlamaV2 found installed."""

from __future__ import annotations

from doctor.engines import in_force
from doctor.model.facts import Facts
from doctor.model.ids import Engine
from doctor.model.plan import Plan


def applies(plan: Plan, facts: Facts | None) -> bool:
    """The engine checks run when the plan names an engine or a launch config, the model is a GGUF, an engine other
    than ExLlamaV2 is what is installed, or no engine is named or found (the engine check then says what each likely
    engine would do on this card)."""
    if plan.engine is not None or plan.engine_launch is not None:
        return True
    if plan.model_path and plan.model_path.lower().endswith(".gguf"):
        return True  # chosen before the model's headers are read
    m = facts.model if facts is not None else None
    if m is not None and m.quant is not None and m.quant.method == "gguf":
        return True
    if facts is None:
        return False
    force = in_force(plan, facts)  # an engine found installed (llama.cpp, Ollama, vLLM), or none at all
    if force.assumed:  # what each likely engine would do needs a card: this machine's, or --target-gpu's
        return bool(facts.nvml.gpus) or bool(plan.target_gpu)
    return force.engine != Engine.EXLLAMAV2
