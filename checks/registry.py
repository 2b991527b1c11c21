"""The one ordered list of checks: checks/manifest.py, written from the check modules by scripts/generate_registry.py,
and which groups a run includes."""

from __future__ import annotations

from checks import manifest
from checks.base import Check
from checks.engine import applies as engine_checks_apply
from checks.manifest import (
    ENGINE_CHECKS,
    ENV_CHECKS,
    MODEL_CHECKS,
    MULTI_GPU_CHECKS,
    PROBE_CHECKS,
    RUNTIME_CHECKS,
    SERVING_CHECKS,
)
from checks.model import applies as model_checks_apply
from checks.multi_gpu import applies as multi_gpu_checks_apply
from doctor.model.facts import Facts
from doctor.model.ids import CheckId
from doctor.model.plan import Plan

__all__ = ["ENGINE_CHECKS", "ENV_CHECKS", "MODEL_CHECKS", "MULTI_GPU_CHECKS", "PROBE_CHECKS", "RUNTIME_CHECKS",
           "SERVING_CHECKS", "all_checks", "check_ids", "checks_for"]


def all_checks() -> tuple[Check, ...]:
    """Every check, group by group in checks.GROUPS order, each group by its checks' `order`."""
    return manifest.ALL_CHECKS


def checks_for(plan: Plan, facts: Facts | None = None) -> tuple[Check, ...]:
    """The default run: every check, less the model group without --model, the multi-GPU group on one GPU and the
    engine group unless the plan names an engine or runs a GGUF."""
    return tuple(c for c in all_checks() if (c not in MODEL_CHECKS or model_checks_apply(plan))
                 and (c not in MULTI_GPU_CHECKS or multi_gpu_checks_apply(facts))
                 and (c not in ENGINE_CHECKS or engine_checks_apply(plan, facts))
                 and (c not in SERVING_CHECKS or server_watched(facts)))


def server_watched(facts: Facts | None) -> bool:
    """server-load judges an engine server's counters, read by watch --engine-url: only where they were."""
    return facts is not None and facts.samples is not None and facts.samples.server is not None


def check_ids() -> list[CheckId]:
    return [c.id for c in all_checks()]
