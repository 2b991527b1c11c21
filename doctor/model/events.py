"""Typed events the workers send to a live screen: the check runner's progress.

Dataclasses, not (str, object) tuples, so a screen matches on the type and a typo is an error.
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
