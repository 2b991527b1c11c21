"""A figure with the span its source gives (low, mid, high): a factor, a ratio or a speed; `mid` is the one used."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Range:
    """A figure with the span its source gives; `mid` is the one used."""

    low: float
    mid: float
    high: float
