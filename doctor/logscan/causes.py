"""Causes and their consequences: a message that follows from another one in the same log is shown under it.

A CUDA start-up failure is followed by "offloaded 0/29 layers to GPU"; a skipped runner by Ollama's CPU fallback. Each
signature names what it can be a consequence of (Signature.consequence_of); when one of those is in the log too, the
match points at it, and the report gives one pitfall with one fix, its knock-on lines listed beneath.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable

from doctor.knowledge.signatures import Signature
from doctor.model.log_analysis import MatchGroup


def link_consequences(matches: Iterable[MatchGroup], signatures: dict[str, Signature]) -> tuple[MatchGroup, ...]:
    """The matches, each that follows from another match of the log marked with that match's signature (the first
    the row names that is present)."""
    matches = tuple(matches)
    present = {m.signature for m in matches}
    out = []
    for m in matches:
        sig = signatures.get(m.signature)
        cause = next((c for c in sig.consequence_of if c in present and c != m.signature), None) if sig else None
        out.append(replace(m, consequence_of=cause) if cause else m)
    return _without_cycles(tuple(out))


def root_of(match: MatchGroup, by_signature: dict[str, MatchGroup]) -> MatchGroup:
    """The match at the top of this one's chain of causes."""
    seen = {match.signature}
    while match.consequence_of and match.consequence_of in by_signature and match.consequence_of not in seen:
        match = by_signature[match.consequence_of]
        seen.add(match.signature)
    return match


def _without_cycles(matches: tuple[MatchGroup, ...]) -> tuple[MatchGroup, ...]:
    """Two rows naming each other both present: the earlier line is the cause."""
    by = {m.signature: m for m in matches}
    out = []
    for m in matches:
        cause = by.get(m.consequence_of or "")
        if cause is not None and cause.consequence_of == m.signature and m.first_line <= cause.first_line:
            m = replace(m, consequence_of=None)
        out.append(m)
    return tuple(out)
