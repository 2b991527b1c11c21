"""The one ordered list of checks. Each group lives in its own package; order is explicit here."""

from __future__ import annotations

from checks.base import Check
from checks.engine import ENGINE_CHECKS
from checks.engine import applies as engine_checks_apply
from checks.env import ENV_CHECKS
from checks.model import MODEL_CHECKS
from checks.model import applies as model_checks_apply
from checks.multi_gpu import MULTI_GPU_CHECKS
from checks.multi_gpu import applies as multi_gpu_checks_apply
from checks.probe import PROBE_CHECKS
from checks.runtime import RUNTIME_CHECKS
from doctor.model.facts import Facts
from doctor.model.ids import CheckId
from doctor.model.plan import Plan


def all_checks() -> tuple[Check, ...]:
    """Environment first, then several GPUs, then model, then runtime health, then whether the timed probe can run."""
    return (tuple(ENV_CHECKS) + tuple(MULTI_GPU_CHECKS) + tuple(MODEL_CHECKS) + tuple(ENGINE_CHECKS)
            + tuple(RUNTIME_CHECKS) + tuple(PROBE_CHECKS))


def checks_for(plan: Plan, facts: Facts | None = None) -> tuple[Check, ...]:
    """The default run: every check, less the model group without --model, the multi-GPU group on one GPU and the
    engine group unless the plan names an engine or runs a GGUF."""
    return tuple(c for c in all_checks() if (c not in MODEL_CHECKS or model_checks_apply(plan))
                 and (c not in MULTI_GPU_CHECKS or multi_gpu_checks_apply(facts))
                 and (c not in ENGINE_CHECKS or engine_checks_apply(plan, facts)))


def check_ids() -> list[CheckId]:
    return [c.id for c in all_checks()]
