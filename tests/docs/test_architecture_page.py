"""docs/architecture.md names the files that hold each pitfall: every path it names must exist, so the page cannot
drift from the code when a file moves."""

from __future__ import annotations

import re

from conftest import ROOT

PAGE = ROOT / "docs" / "architecture.md"


def test_every_path_the_page_names_exists():
    named = set(re.findall(r"`((?:doctor|checks|tests)/[\w/.\-]+)`", PAGE.read_text(encoding="utf-8")))
    assert len(named) > 20
    missing = sorted(p for p in named if not (ROOT / p).exists())
    assert not missing, f"docs/architecture.md names files that do not exist: {missing}"

