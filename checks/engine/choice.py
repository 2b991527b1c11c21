"""When the engine checks run: the plan names an engine or a launch config, or the model is a GGUF."""

from __future__ import annotations

from doctor.model.facts import Facts
from doctor.model.plan import Plan


def applies(plan: Plan, facts: Facts | None) -> bool:
    """The engine checks run when the plan names an engine or a launch config, or the model is a GGUF."""
    if plan.engine is not None or plan.engine_launch is not None:
        return True
    if plan.model_path and plan.model_path.lower().endswith(".gguf"):
        return True  # chosen before the model's headers are read
    m = facts.model if facts is not None else None
    return m is not None and m.quant is not None and m.quant.method == "gguf"
