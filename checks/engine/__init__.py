"""Engine checks, in the order they run: the engine on this card, its CUDA build, its launch settings, the GGUF budget.

They run when the plan names an engine (--engine) or a launch config (--engine-config), or the model is a GGUF
(`applies`); the engine itself is chosen in checks/engine/choice.py.
"""

from checks.engine.build import CHECK as ENGINE_BUILD
from checks.engine.choice import applies
from checks.engine.gguf_fit import CHECK as GGUF_BUDGET
from checks.engine.launch import CHECK as ENGINE_LAUNCH
from checks.engine.support import CHECK as ENGINE

ENGINE_CHECKS = (ENGINE, ENGINE_BUILD, ENGINE_LAUNCH, GGUF_BUDGET)

__all__ = ["ENGINE_CHECKS", "applies"]
