"""Checks that exist only on a host with several GPUs: which index is which, and how the GPUs are linked.

They join the default run only when NVML sees more than one GPU (`applies`), so a one-GPU report is unchanged.
"""

from __future__ import annotations

from checks.multi_gpu.numbering import CHECK as GPU_NUMBERING
from checks.multi_gpu.topology import CHECK as GPU_TOPOLOGY
from doctor.model.facts import Facts

MULTI_GPU_CHECKS = (GPU_NUMBERING, GPU_TOPOLOGY)


def applies(facts: Facts | None) -> bool:
    return facts is not None and len(facts.nvml.gpus) > 1
