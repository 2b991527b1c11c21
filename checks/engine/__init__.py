"""Engine checks: the engine on this card, its CUDA build, its launch settings, the GGUF budget.

They run when the plan names an engine (--engine) or a launch config (--engine-config), or the model is a GGUF
(`applies`); the engine itself is chosen in checks/engine/choice.py.
"""

from checks.engine.choice import applies

__all__ = ["applies"]
