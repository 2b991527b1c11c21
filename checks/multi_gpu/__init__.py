"""Checks that exist only on a host with several GPUs: which index is which, and how the GPUs are linked.

They join the default run only when NVML sees more than one GPU (`applies`), so a one-GPU report is unchanged.
"""

from __future__ import annotations

from doctor.model.facts import Facts


def applies(facts: Facts | None) -> bool:
    return facts is not None and len(facts.nvml.gpus) > 1
