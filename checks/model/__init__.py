"""Model checks: path and files, format/kernel path, dtype, VRAM budget, ceiling.

They run only when --model is given (`applies`); asked for by id without a model, they skip and say why.
"""

from __future__ import annotations

from doctor.model.plan import Plan


def applies(plan: Plan) -> bool:
    return bool(plan.model_path)
