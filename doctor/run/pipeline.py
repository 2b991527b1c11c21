"""gather -> Facts -> checks -> Report: the checks' stage of a Run (doctor/run/run.py), and of the commands that
need only the checks (watch, explain's confirmation, fleet)."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Callable, Iterable

from checks.base import Check
from checks.per_gpu import judge_each_gpu, judged_indices
from checks.prescription.machine import machine_prescription
from checks.registry import checks_for
from checks.runner import run_checks
from doctor.engines import in_force
from doctor.facts.source import GatherOptions, gather_live
from doctor.model.events import CheckEvent
from doctor.model.facts import Facts
from doctor.model.plan import Plan
from doctor.model.plausible import scrub
from doctor.model.report import Report, build_report
from doctor.model.source import LIVE, Provenance
from doctor.verdict.batched import batched_decode

__all__ = ["GatherOptions", "default_checks", "diagnose", "gather", "live_options"]


def live_options(torch_timeout_s: float = 20.0, fresh: bool = False, use_cache: bool = True) -> GatherOptions:
    """Options with the torch child already started, so a screen can stop it when the user quits."""
    from doctor.facts.python.torch_facts import TorchGatherer  # lazy: a replay reads no torch install (platformdirs, the wheel's files)

    return GatherOptions(torch_timeout_s=torch_timeout_s, fresh=fresh, use_cache=use_cache,
                         torch_gatherer=TorchGatherer(timeout_s=torch_timeout_s, fresh=fresh, use_cache=use_cache))


def gather(plan: Plan, options: GatherOptions = GatherOptions()) -> Facts:
    return gather_live(options)


def default_checks(plan: Plan, facts: Facts | None) -> tuple[Check, ...]:
    """The checks a run makes when the user names none: model checks only with --model, multi-GPU checks
    only where several GPUs are seen (a screen asks here, so that it shows the list before the run starts)."""
    return tuple(checks_for(plan, facts))


def diagnose(plan: Plan, facts: Facts | None = None, *, source: Provenance = LIVE, note: str = "",
             checks: Iterable[Check] | None = None, options: GatherOptions = GatherOptions(),
             on_event: Callable[[CheckEvent], None] | None = None) -> Report:
    """Gather live facts (unless given, as in a replay), run the ordered checks, build the Report."""
    timings: dict[str, float] = {}
    if facts is None:
        t0 = time.perf_counter()
        facts = gather(plan, options)
        timings["gather_ms"] = round((time.perf_counter() - t0) * 1000, 1)
    if plan.model_path:  # live or replay: read --model now unless the facts already hold that directory
        from doctor.facts.modeldir.directory import attach_model  # lazy: model headers (and huggingface_hub's names) are read only with --model

        t0 = time.perf_counter()
        facts = attach_model(facts, plan.model_path, plan.model_path_parts)
        timings["model_ms"] = round((time.perf_counter() - t0) * 1000, 1)

    facts = scrub(facts)  # live or replayed: no check sees NaN, a negative size or a capability like "banana"
    t0 = time.perf_counter()
    chosen = default_checks(plan, facts) if checks is None else tuple(checks)
    indices = judged_indices(facts, plan)
    if indices and plan.gpu_index not in indices:  # the host-wide run looks at the first GPU judged
        plan = replace(plan, gpu_index=indices[0])
    findings = run_checks(facts, plan, chosen, on_event)
    gpus = judge_each_gpu(facts, plan, chosen)
    timings["checks_ms"] = round((time.perf_counter() - t0) * 1000, 1)
    engine = in_force(plan, facts)
    return build_report(facts, plan, findings, source=source, note=note, timings_ms=timings, gpus=gpus,
                        prescription=machine_prescription(facts, plan), engine_in_force=engine,
                        batched_decode=batched_decode(facts, plan, engine))

