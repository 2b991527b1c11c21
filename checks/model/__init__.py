"""Model checks, in the order they run: path and files, format/kernel path, dtype, VRAM budget, ceiling.

They run only when --model is given (`applies`); asked for by id without a model, they skip and say why.
"""

from __future__ import annotations

from checks.model.ceiling import CHECK as CEILING
from checks.model.dtype import CHECK as DTYPE
from checks.model.memory_budget import CHECK as MEMORY_BUDGET
from checks.model.path import CHECK as MODEL_PATH
from checks.model.quant_format import CHECK as QUANT_FORMAT
from doctor.model.plan import Plan

MODEL_CHECKS = (MODEL_PATH, QUANT_FORMAT, DTYPE, MEMORY_BUDGET, CEILING)


def applies(plan: Plan) -> bool:
    return bool(plan.model_path)
