"""The card the model checks judge: the --target-gpu from the knowledge base, or the GPUs NVML sees.

A planning target is not measured: its free VRAM is the idle card's total as NVML reports it on that
model, and every finding that uses it says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from checks.base import CheckContext
from doctor.knowledge.arithmetic.gpu_numbering import cuda_numbering
from doctor.knowledge.arithmetic.vram_budget import GpuRoom
from doctor.knowledge.exllamav2_memory import NVML_TOTAL_MIB, PLANNING_FALLBACK_FRACTION
from doctor.knowledge.gpus import GpuSpec, spec_for_key, spec_for_name
from doctor.model.facts import GpuFacts
from doctor.model.unknown import known


@dataclass(frozen=True)
class Card:
    name: str
    cc: str | None
    spec: GpuSpec | None
    rooms: tuple[GpuRoom, ...]
    measured: bool  # False: a planning target from the knowledge base

    @property
    def bandwidth_gbs(self) -> float | None:
        return self.spec.bandwidth_gbs if self.spec else None

    @property
    def source(self) -> str:
        if self.measured:
            return "this machine's GPU(s), free VRAM measured by NVML"
        return f"planning target --target-gpu {self.spec.key if self.spec else self.name} (knowledge base, not measured)"


def _measured_room(g: GpuFacts) -> GpuRoom | None:
    """The GPU's room as NVML measured it; None when NVML did not report its free VRAM."""
    free, total = g.memory_free_mib, g.memory_total_mib
    if not known(free):
        return None
    return GpuRoom(g.index, g.name if known(g.name) else "GPU", free, total if known(total) else free)


def target_card(key: str, n_gpus: int) -> Card | None:
    spec = spec_for_key(key) or spec_for_name(key)
    if spec is None:
        return None
    total = NVML_TOTAL_MIB.get(spec.key, (spec.memory_gb * 1024 * PLANNING_FALLBACK_FRACTION,))[0]
    rooms = tuple(GpuRoom(i, spec.name, total, total, measured=False) for i in range(max(1, n_gpus)))
    return Card(spec.name, spec.cc, spec, rooms, measured=False)


def card_for(ctx: CheckContext) -> Card | None:
    """None when there is neither a usable GPU here nor a --target-gpu."""
    plan = ctx.plan
    if plan.target_gpu:
        return target_card(plan.target_gpu, len(plan.gpu_split) if plan.gpu_split else 1)
    gpus = [g for g in ctx.facts.nvml.gpus if known(g.memory_free_mib)] if ctx.facts.nvml.available else []
    if not gpus:
        return None
    if plan.gpu_index:  # one chosen card, as with CUDA_VISIBLE_DEVICES=INDEX
        gpus = [g for g in gpus if g.index == plan.gpu_index]
    elif plan.gpu_split:  # gpu_split is read in CUDA order (CUDA_DEVICE_ORDER, CUDA_VISIBLE_DEVICES), not NVML's
        by_index = {g.index: g for g in gpus}
        numbering = cuda_numbering(tuple(gpus), ctx.facts.python.env)
        order = [by_index[d.nvml_index] for d in numbering.devices if d.nvml_index in by_index]
        # a card CUDA_VISIBLE_DEVICES hides never takes a share, even when it hides all of them
        gpus = (order if order or numbering.visible is not None else gpus)[: len(plan.gpu_split)]
    if not gpus:
        return None
    first = gpus[0]
    name = first.name if known(first.name) else "GPU"
    rooms = tuple(room for g in gpus if (room := _measured_room(g)) is not None)
    cc = first.compute_capability if known(first.compute_capability) else None
    mem = first.memory_total_mib if known(first.memory_total_mib) else None
    return Card(name, cc, spec_for_name(name, mem) if known(first.name) else None, rooms, measured=True)
