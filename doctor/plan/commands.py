"""The commands a plan row prints, from the row's engine (EngineAdapter.plan_steps): one entry per step, in order
(download, convert, ..., config, run). A step named "config" is a YAML file (its first line, a comment, names the
file); every other step is one shell command line. Printed, never run."""

from __future__ import annotations

from doctor.engines import EngineAdapter
from doctor.engines.base import PlanRun
from doctor.model.quant_plan import step_language

__all__ = ["commands", "step_language"]


def commands(engine: EngineAdapter, run: PlanRun) -> dict[str, str]:
    steps = engine.plan_steps(run)
    out = dict(steps)
    if len(out) != len(steps):
        raise ValueError(f"{engine.id}: a plan step name repeats in {[k for k, _ in steps]}")
    return out
