"""The result of one check: a status, a one-line summary, the numbers behind it, and a fix.

The doctor prints fixes; it never runs them. `commands` are exact shell lines kept apart
from the prose so a user (or the TUI) can copy them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any, Iterable

from doctor.model.ids import CheckId
from doctor.model.prescription import Prescription


class Status(str, Enum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"
    ERROR = "error"  # the check itself crashed; isolated, the others go on
    INFO = "info"  # sets the frame (e.g. the ceiling); never a problem


@dataclass(frozen=True)
class Finding:
    id: CheckId | str  # a CheckId; plain text only when read from a newer doctor's report with a check this one lacks
    title: str
    status: Status
    summary: str
    evidence: dict[str, Any] = field(default_factory=dict)
    fix: str = ""
    commands: tuple[str, ...] = ()
    duration_ms: float = 0.0

    def with_duration(self, ms: float) -> "Finding":
        return replace(self, duration_ms=round(ms, 3))



# worst first: a failure outranks a crash, a crash a warning, and so on
SEVERITY = {Status.FAIL: 5, Status.ERROR: 4, Status.WARN: 3, Status.PASS: 2, Status.INFO: 1, Status.SKIP: 0}


def worst_status(findings: Iterable[Finding]) -> Status:
    """The status that speaks for a list of findings (PASS for an empty one)."""
    return max((f.status for f in findings), key=SEVERITY.__getitem__, default=Status.PASS)


@dataclass(frozen=True)
class GpuJudgement:
    """The single-card checks run for one GPU of a host with several (issue 15)."""

    index: int  # NVML index (PCI bus order)
    name: str
    findings: tuple[Finding, ...] = ()
    cuda_index: int | None = None  # where CUDA (and so ExLlamaV2's gpu_split) numbers it; None: CUDA does not see it
    prescription: Prescription | None = None  # this card's route (checks/prescription/machine.py), as the host's is

    @property
    def status(self) -> Status:
        return worst_status(self.findings)

    def top(self) -> Finding | None:
        """The finding that explains this GPU's status (the first of the worst)."""
        worst = self.status
        return next((f for f in self.findings if f.status == worst), None)
