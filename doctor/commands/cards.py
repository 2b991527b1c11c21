"""Which cards `plan` and `fit` answer for when none is named: the ones NVML finds here, else the V100 16 GB."""

from __future__ import annotations

import os
import sys
import threading

from doctor.knowledge.gpus import GpuSpec, spec_for_key, spec_for_name
from doctor.model.unknown import known

DEFAULT_CARD = "v100-pcie-16gb"
DEFAULT_HELP = f"default: the card(s) NVML finds here, else {DEFAULT_CARD}"


def detected_cards() -> tuple[tuple[GpuSpec, ...], str]:
    """The cards NVML finds here (read in a child: NVML can hang), or the default card and why."""
    if _no_nvidia_driver():
        return _default("no NVIDIA driver is loaded here")
    from doctor.facts.nvml.isolated import read_isolated  # lazy: only without --target-gpu

    nvml = read_isolated()
    found = []
    for g in nvml.gpus:
        spec = spec_for_name(g.name, g.memory_total_mib if known(g.memory_total_mib) else None) if known(g.name) else None
        if spec is not None:
            found.append(spec)
    if found:
        return tuple(found), "detected"
    return _default(nvml.reason or "no card NVML names is in the doctor's table")


def _default(why: str) -> tuple[tuple[GpuSpec, ...], str]:
    default = spec_for_key(DEFAULT_CARD)
    assert default is not None
    return (default,), f"default ({why}; name yours with --target-gpu)"


def _no_nvidia_driver() -> bool:
    """Linux with neither the NVIDIA kernel driver (/proc/driver/nvidia) nor WSL2's GPU device (/dev/dxg): no card to
    find, so no NVML child is started (a CPU-only machine plans at once)."""
    return sys.platform.startswith("linux") and not (os.path.exists("/proc/driver/nvidia/version")
                                                     or os.path.exists("/dev/dxg"))


class CardsDetection:
    """detected_cards() in a thread, started at once: NVML's child (about 0.1 s to start) overlaps the caller's own
    work (plan's catalogue lookup) instead of adding to it."""

    def __init__(self) -> None:
        self._answer: tuple[tuple[GpuSpec, ...], str] | None = None
        self._failed: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="v100-doctor-detect-cards", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._answer = detected_cards()
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
            self._failed = exc

    def result(self) -> tuple[tuple[GpuSpec, ...], str]:
        self._thread.join()
        if self._failed is not None:
            raise self._failed
        assert self._answer is not None
        return self._answer
