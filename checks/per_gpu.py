"""Every GPU judged on its own: the single-card checks run once per GPU, each with the plan pointed at it.

A host with a 2080 Ti at index 0 and a V100 at index 1 must fail on the V100 even when GPU 0 is fine.
"""

from __future__ import annotations

from dataclasses import replace

from checks.base import Check
from checks.manifest import ALL_CHECKS
from checks.prescription.machine import machine_prescription
from checks.runner import run_checks
from doctor.knowledge.arithmetic.gpu_numbering import cuda_numbering
from doctor.model.facts import Facts
from doctor.model.findings import SEVERITY, GpuJudgement
from doctor.model.ids import CheckId
from doctor.model.plan import Plan
from doctor.model.unknown import show

# the checks that look at one card (Check.per_gpu); the others (host, model, numbering) run once
PER_GPU_CHECK_IDS = tuple(c.id for c in ALL_CHECKS if c.per_gpu)


def judged_indices(facts: Facts, plan: Plan) -> tuple[int, ...]:
    """--gpu N... when given, else every GPU NVML sees (NVML order)."""
    present = tuple(g.index for g in facts.nvml.gpus)
    return plan.gpu_indices if plan.gpu_indices is not None else present


def judge_each_gpu(facts: Facts, plan: Plan, checks: tuple[Check, ...]) -> tuple[GpuJudgement, ...]:
    """One GpuJudgement per judged GPU, worst first; empty when one GPU or none is judged."""
    indices = judged_indices(facts, plan)
    if len(indices) < 2:
        return ()
    per_card = [c for c in checks if c.id in PER_GPU_CHECK_IDS]
    gate = [c for c in checks if c.id == CheckId.GPU_PRESENT]
    numbering = cuda_numbering(facts.nvml.gpus, facts.python.env)
    out = []
    for i in indices:
        gpu = facts.gpu(i)
        findings = run_checks(facts, replace(plan, gpu_index=i), gate + per_card)
        out.append(GpuJudgement(index=i, name=show(gpu.name) if gpu else "not present",
                                findings=tuple(f for f in findings if f.id in PER_GPU_CHECK_IDS or gpu is None),
                                cuda_index=numbering.cuda_index_of(i),
                                prescription=machine_prescription(facts, replace(plan, gpu_index=i)) if gpu else None))
    return tuple(sorted(out, key=lambda g: (-SEVERITY[g.status], g.index)))
