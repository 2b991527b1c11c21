"""The result of one check: a status, a one-line summary, the numbers behind it, and a fix.

The doctor prints fixes; it never runs them. `commands` are exact shell lines kept apart
from the prose so a user (or the TUI) can copy them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any


class Status(str, Enum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"
    ERROR = "error"  # the check itself crashed; isolated, the others go on
    INFO = "info"  # sets the frame (e.g. the ceiling); never a problem


@dataclass(frozen=True)
class Finding:
    id: str
    title: str
    status: Status
    summary: str
    evidence: dict[str, Any] = field(default_factory=dict)
    fix: str = ""
    commands: tuple[str, ...] = ()
    duration_ms: float = 0.0

    def with_duration(self, ms: float) -> "Finding":
        return replace(self, duration_ms=round(ms, 3))

