"""What the verdict panel draws, as plain data (no textual): the measured speed, the ceiling and
the causes of the gap, already ranked by the verdict."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CauseBar:
    label: str
    share: float | None  # of the gap, 0..1; None: present, but the evidence gives no size
    note: str = ""


@dataclass(frozen=True)
class VerdictView:
    measured_tok_s: float
    ceiling_tok_s: float
    headline: str = ""
    fix_first: str = ""
    limit_options: str = ""  # at the card's limit: the levers, offered as options, never as "Fix first"
    reference_tok_s: float | None = None  # 64 tok/s: the seed's V100 result, shown on V100-class cards
    reference_label: str = ""
    causes: tuple[CauseBar, ...] = ()
