"""An engine's answer to one question, apart from the adapter interface so that the rules an adapter calls
(doctor/engines/architecture.py) can build it without importing the interface back."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from doctor.model.findings import Status


@dataclass(frozen=True)
class Judgement:
    """An engine's answer to one question about this card or model, ready for a check's Finding."""

    status: Status
    summary: str
    fix: str = ""
    commands: tuple[str, ...] = ()
    evidence: dict[str, Any] = field(default_factory=dict)
