"""Judging an engine's support table row against a card: the part every adapter's judge_card shares."""

from __future__ import annotations

from dataclasses import replace

from doctor.engines.base import Judgement
from doctor.knowledge.engines import EngineSupport, supports
from doctor.model.findings import Status


def judge_row(row: EngineSupport, cc: str, name: str) -> Judgement:
    """Pass where the row's floor admits the card, warn where only its experimental floor does, else fail."""
    ev = {"source": row.source, "confidence": row.confidence, "versions": row.versions}
    if supports(row, cc):
        return Judgement(Status.PASS, f"{row.engine} {row.versions} supports cc {cc} ({name})", evidence=ev)
    if row.experimental_from and supports(replace(row, min_cc=row.experimental_from), cc):
        return Judgement(Status.WARN, f"{row.engine} supports cc {cc} only experimentally (needs {row.min_cc} for full support)",
                         row.instead, evidence=ev)
    return Judgement(Status.FAIL, f"{row.engine} {row.versions} needs cc {row.min_cc}+; {name} is cc {cc}: {row.below}",
                     row.instead, evidence=ev)
