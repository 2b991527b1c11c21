"""The keyword prefilter split over several automata (more than PREFILTER_MAX keywords, issue 29) finds a hit in the
same lines, first hits at the same offsets, as one pass of bytes.find per keyword."""

from __future__ import annotations

import pytest

from doctor.logscan.keywords import PREFILTER_MAX, KeywordFinder
from doctor.logscan.scanner import Scanner


def first_hits(finder: KeywordFinder, low: bytes) -> dict[int, int]:
    out: dict[int, int] = {}
    for pos in finder.positions(low):
        out.setdefault(low.rfind(b"\n", 0, pos) + 1, pos)
    return out


def test_the_scanner_has_more_keywords_than_one_prefilter_serves():
    finder = Scanner().finder
    assert len(finder.keywords) > PREFILTER_MAX and finder.engine == "ahocorasick-rs"
    assert len(finder._automata) >= 2


@pytest.mark.parametrize("count", [3, PREFILTER_MAX, PREFILTER_MAX + 1, 3 * PREFILTER_MAX + 5])
def test_split_automata_find_the_lines_bytes_find_does(count):
    words = tuple(b"kw%03dx" % i for i in range(count))
    lines = [b"nothing here", b"a kw000x and kw%03dx" % (count - 1), b"only kw%03dx at the end" % (count // 2),
             b"kw%03dx kw001x" % (count - 1), b"", b"kw00 almost"] * 50
    low = b"\n".join(lines)
    fast, slow = KeywordFinder(words), KeywordFinder(words, accelerated=False)
    assert fast.engine == "ahocorasick-rs"
    assert first_hits(fast, low) == first_hits(slow, low)
    assert len(first_hits(fast, low)) == 150
