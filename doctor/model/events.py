"""Typed events the workers send to a live screen: the check runner's progress and the probe's.

Dataclasses, not (str, object) tuples or dicts, so a screen matches on the type and a typo is an error.
The probe worker speaks JSON lines to its runner (doctor/probe/protocol.py); `doctor.probe.protocol.screen_events`
turns each line into these before any screen sees it.
"""

from __future__ import annotations

from dataclasses import dataclass

from doctor.model.findings import Finding


@dataclass(frozen=True)
class CheckStarted:
    check_id: str
    title: str


@dataclass(frozen=True)
class CheckFinished:
    finding: Finding


CheckEvent = CheckStarted | CheckFinished


@dataclass(frozen=True)
class ProbePhase:
    """The probe entered a phase (start, import, build, load, warmup, decode, ...)."""

    phase: str
    message: str = ""
    total: float | None = None  # None: no measure of progress in this phase


@dataclass(frozen=True)
class ProbeProgress:
    done: float
    total: float | None = None
    message: str = ""


@dataclass(frozen=True)
class ProbeRate:
    """One decode-speed reading (a warm-up step or a timed run)."""

    tok_s: float


@dataclass(frozen=True)
class GpuReading:
    """The GPU's latest sampled state; a field left None was not in this reading."""

    mem_clock_mhz: float | None = None
    mem_clock_max_mhz: float | None = None
    temperature_c: float | None = None
    pcie_rx_mbs: float | None = None


@dataclass(frozen=True)
class ProbeFinished:
    summary: str


@dataclass(frozen=True)
class ProbeFailed:
    message: str


@dataclass(frozen=True)
class ProbeTimedOut:
    phase: str


@dataclass(frozen=True)
class ProbeSkipped:
    """The probe does not run here; the reason says what would run it."""

    reason: str


@dataclass(frozen=True)
class ProbeCancelled:
    phase: str = ""


ProbeEvent = (ProbePhase | ProbeProgress | ProbeRate | GpuReading | ProbeFinished | ProbeFailed | ProbeTimedOut
              | ProbeSkipped | ProbeCancelled)
