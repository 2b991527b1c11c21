"""Find where any of a set of lower-case keywords occurs in a block: the streaming scanner's prefilter.

Only lines holding a keyword are looked at further, so the regexes never see the bulk of a large
log. ahocorasick-rs (an Aho-Corasick automaton, one pass for all keywords) does the search; if it
cannot be imported, one `bytes.find` pass per keyword gives the same positions, several times slower.
"""

from __future__ import annotations

from typing import Iterable


def minimal_keywords(words: Iterable[str]) -> tuple[bytes, ...]:
    """Drop words that contain another word: a line holding the longer one also holds the shorter."""
    unique = sorted({w.lower() for w in words if w}, key=len)
    kept: list[str] = []
    for w in unique:
        if not any(k in w for k in kept):
            kept.append(w)
    return tuple(k.encode("utf-8") for k in kept)


class KeywordFinder:
    def __init__(self, keywords: Iterable[bytes], accelerated: bool = True):
        self.keywords = tuple(keywords)
        self._automaton = _automaton(self.keywords) if accelerated else None

    @property
    def engine(self) -> str:
        return "ahocorasick-rs" if self._automaton is not None else "bytes.find"

    def positions(self, low: bytes) -> list[int]:
        """Start offsets of keyword hits in an already lower-cased block, in increasing order."""
        if self._automaton is not None:
            return [start for _, start, _ in self._automaton.find_matches_as_indexes(low, overlapping=False)]
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


def _automaton(keywords: tuple[bytes, ...]):
    try:
        from ahocorasick_rs import BytesAhoCorasick
    except ImportError:
        return None
    return BytesAhoCorasick(list(keywords))
