"""Typed events a Run (doctor/run/run.py) sends to its subscribers: the checks chosen, the check runner's
progress, the probe's, and the finished report. The CLI's outputs and the TUI subscribe to the same events.

Dataclasses, not (str, object) tuples or dicts, so a screen matches on the type and a typo is an error.
The probe worker speaks JSON lines to its runner (doctor/probe/protocol.py); `doctor.probe.protocol.screen_events`
turns each line into these before any screen sees it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from doctor.model.findings import Finding

if TYPE_CHECKING:
    from doctor.model.report import Report
    from doctor.model.source import Provenance


@dataclass(frozen=True)
class ChecksChosen:
    """The checks this run will make, in order, as (id, title). A live run says it twice: before gathering (from
    the plan alone, so a screen can list them at once) and after (when the GPUs seen may add checks)."""

    checks: tuple[tuple[str, str], ...]
    gathering: bool  # True: said before this machine's facts are read; the list may still change
    provenance: Provenance | None = None  # known once the source is resolved (gathering False)


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
    unit: str = ""  # what is counted (compiled units, layers, tokens)


@dataclass(frozen=True)
class ProbeRate:
    """One decode-speed reading (a warm-up step or a timed run)."""

    tok_s: float
    phase: str = ""  # "decode" for a timed run
    run: int | None = None  # the timed run's number
    cpu_wall: float | None = None  # CPU time over wall time in that run (host-bound near 1)
    faults_per_token: float | None = None  # page faults per generated token in that run


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
    phase: str = ""  # where it failed, when the worker said


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


@dataclass(frozen=True)
class ReportReady:
    """The run's last event: the whole report (checks, and the probe and its verdict where one ran or was recorded)."""

    report: Report


RunEvent = ChecksChosen | CheckEvent | ProbeEvent | ReportReady
