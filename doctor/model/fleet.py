"""A fleet: one row per host × GPU from many reports, the causes they share, and the slow outliers.

Saved as JSON under its own schema (doctor/schema/fleet-1.json), apart from the per-host report's.
"""

from __future__ import annotations

from dataclasses import dataclass

FLEET_SCHEMA = "v100-doctor/fleet/1"


@dataclass(frozen=True)
class FleetRow:
    host: str
    gpu: int | None  # NVML index; None when the report saw no GPU
    status: str  # pass | info | warn | fail | error | skip | unreadable
    top_check: str  # the check behind the status ("" when all passed)
    top_cause: str  # its summary, one line
    card: str
    driver: str
    torch: str
    model: str = ""
    tok_s: float | None = None  # probed decode speed, when the probe ran on this GPU
    ceiling_tok_s: float | None = None
    source: str = ""  # the file the row came from
    speed_unknown: str = ""  # why a recorded speed was not taken (NaN, 1e308 tok/s): shown as unknown, never as a number

    @property
    def share_of_ceiling(self) -> float | None:
        if self.tok_s is None or not self.ceiling_tok_s:
            return None
        return self.tok_s / self.ceiling_tok_s


@dataclass(frozen=True)
class CauseGroup:
    check: str
    cause: str  # the shared part of the summary
    status: str
    hosts: tuple[str, ...]


@dataclass(frozen=True)
class Outlier:
    host: str
    gpu: int | None
    card: str
    model: str
    tok_s: float
    median_tok_s: float
    peers: int  # rows of the same card and model

    @property
    def ratio(self) -> float:
        return self.tok_s / self.median_tok_s


@dataclass(frozen=True)
class Fleet:
    rows: tuple[FleetRow, ...]
    groups: tuple[CauseGroup, ...]
    outliers: tuple[Outlier, ...]
    reports: int  # documents read
    unreadable: int = 0
    schema: str = FLEET_SCHEMA

    @property
    def hosts(self) -> int:
        return len({r.host for r in self.rows})
