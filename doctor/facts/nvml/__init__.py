"""The one NVML reader, for the snapshot (Facts) and for live sampling (the probe's sampler, `watch`).

    session.py   NvmlSession: the only owner of nvmlInit/nvmlShutdown
    binding.py   the pynvml module as called: versioned function names, nvml.h constants, error kinds
    device.py    Device: one GPU, one method per reading, each a value or Unknown(reason), range-checked
    snapshot.py  gather_nvml(): NvmlFacts from every Device once
    topology.py  the links between GPUs (NVLink lanes, PCIe level, P2P)

The sampler (doctor/facts/sampling) reads the same Device each tick.
"""

from __future__ import annotations

from doctor.facts.nvml.binding import decode_clocks_event_mask, load_pynvml
from doctor.facts.nvml.device import Device
from doctor.facts.nvml.session import NvmlSession
from doctor.facts.nvml.snapshot import gather_nvml

__all__ = ["Device", "NvmlSession", "decode_clocks_event_mask", "gather_nvml", "load_pynvml"]
