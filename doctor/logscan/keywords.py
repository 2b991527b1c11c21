"""Find where any of a set of lower-case keywords occurs in a block: the streaming scanner's prefilter.

Only lines holding a keyword are looked at further, so the regexes never see the bulk of a large
log. ahocorasick-rs (an Aho-Corasick automaton, one pass for all keywords) does the search; if it
cannot be imported, one `bytes.find` pass per keyword gives the same positions, several times slower.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterable, Sequence

if TYPE_CHECKING:
    from ahocorasick_rs import AhoCorasick, BytesAhoCorasick

    from doctor.knowledge.signatures import Signature


def minimal_keywords(words: Iterable[str]) -> tuple[bytes, ...]:
    """Drop words that contain another word: a line holding the longer one also holds the shorter."""
    unique = sorted({w.lower() for w in words if w}, key=len)
    kept: list[str] = []
    for w in unique:
        if not any(k in w for k in kept):
            kept.append(w)
    return tuple(k.encode("utf-8") for k in kept)


PREFILTER_MAX = 64  # ahocorasick-rs's SIMD prefilter (Teddy) serves at most this many keywords; more run without it


class KeywordFinder:
    """Keyword hits, through one automaton per PREFILTER_MAX keywords: each keeps its SIMD prefilter. Measured on a quiet
    log (issue 29, 72 keywords, CPU s per 20 MB): one automaton 0.032, two 0.012; a hit-dense log: 0.057 against 0.039.
    Every line with a keyword gets a hit either way, and its first hit is the same (leftmost of all)."""

    def __init__(self, keywords: Iterable[bytes], accelerated: bool = True):
        self.keywords = tuple(keywords)
        parts = max(1, -(-len(self.keywords) // PREFILTER_MAX))
        size = -(-len(self.keywords) // parts) if self.keywords else 0
        automata = [_automaton(self.keywords[i:i + size]) for i in range(0, len(self.keywords), size)] if (
            accelerated and self.keywords) else []
        self._automata: list[BytesAhoCorasick] = ([a for a in automata if a is not None]
                                                   if automata and all(a is not None for a in automata) else [])

    @property
    def engine(self) -> str:
        return "ahocorasick-rs" if self._automata else "bytes.find"

    def positions(self, low: bytes) -> list[int]:
        """Start offsets of keyword hits in an already lower-cased block, in increasing order."""
        if len(self._automata) == 1:
            return [start for _, start, _ in self._automata[0].find_matches_as_indexes(low, overlapping=False)]
        if self._automata:
            found = [start for a in self._automata for _, start, _ in a.find_matches_as_indexes(low, overlapping=False)]
            found.sort()
            return found
        hits: list[int] = []
        for kw in self.keywords:
            find, at = low.find, low.find(kw)
            while at != -1:
                hits.append(at)
                end = low.find(b"\n", at)  # one hit per line is enough: the whole line gets classified
                if end == -1:
                    break
                at = find(kw, end)
        hits.sort()
        return hits


def _automaton(keywords: tuple[bytes, ...]) -> BytesAhoCorasick | None:
    """Leftmost-first matching lets ahocorasick-rs use its SIMD prefilter: 0.04 s against 0.37 s for 200 MB of a quiet
    log (issue 17, CPU time). The lines it finds are the same: a keyword occurrence it does not report overlaps one it
    does, and no keyword holds a newline, so both are on one line."""
    try:
        from ahocorasick_rs import (  # lazy: optional: without ahocorasick_rs the stdlib search is used
            MATCHKIND_LEFTMOST_FIRST,
            BytesAhoCorasick,
            Implementation,
        )
    except ImportError:
        return None
    return BytesAhoCorasick(list(keywords), matchkind=MATCHKIND_LEFTMOST_FIRST, implementation=Implementation.DFA)


class SignatureIndex:
    """Which signatures' anchors occur in one examined line, in the signatures' order, in one search.

    Profiled on an error-dense log (every line examined): 70% of `explain`'s time went to testing each of
    the ~30 signatures' anchors one by one on every line; one automaton over all anchors replaces that."""

    def __init__(self, signatures: Sequence[Signature], accelerated: bool = True) -> None:
        self.anchors: list[str] = []
        owners: dict[str, list[int]] = {}
        for i, sig in enumerate(signatures):
            for a in sig.anchors:
                if a not in owners:
                    owners[a] = []
                    self.anchors.append(a)
                owners[a].append(i)
        self.owners = [tuple(owners[a]) for a in self.anchors]
        self.compiled = [(sig, sig.regex) for sig in signatures]
        self._automaton = _str_automaton(self.anchors) if accelerated and self.anchors else None

    def of(self, low: str) -> list[tuple[Signature, re.Pattern]]:
        if self._automaton is not None:
            hits = {i for k, _, _ in self._automaton.find_matches_as_indexes(low, overlapping=True) for i in self.owners[k]}
        else:
            hits = {i for k, a in enumerate(self.anchors) if a in low for i in self.owners[k]}
        return [self.compiled[i] for i in sorted(hits)]


def _str_automaton(words: list[str]) -> AhoCorasick | None:
    try:
        from ahocorasick_rs import AhoCorasick  # lazy: optional: without ahocorasick_rs the stdlib search is used
    except ImportError:
        return None
    return AhoCorasick(words)
