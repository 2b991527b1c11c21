"""User-facing text cites the project's own docs or public sources, never a file a user cannot open (issue 39:
knowledge rows cited ../shared/seeds/... and examples "the README's V100 write-up"); the reference story has its
own page, docs/reference-story.md, with the figures the doctor uses."""

from __future__ import annotations

import re

from conftest import ROOT

UNOPENABLE = re.compile(r"shared/seeds|README's (?:V100 )?(?:16 GB )?write-up|the README's V100")


def test_no_shipped_text_cites_what_a_user_cannot_open():
    shipped = [*(ROOT / "doctor").rglob("*.py"), *(ROOT / "doctor").rglob("*.json"), *(ROOT / "checks").rglob("*.py"),
               *(ROOT / "docs").rglob("*.md"), ROOT / "README.md"]
    hits = [f"{p.relative_to(ROOT)}:{n}" for p in shipped for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if UNOPENABLE.search(line)]
    assert not hits, hits


def test_the_reference_story_page_holds_the_figures_it_is_cited_for():
    page = (ROOT / "docs" / "reference-story.md").read_text(encoding="utf-8")
    for figure in ("4 tok/s", "25 tok/s", "40 tok/s", "64 tok/s", "14.3 GB", "12.7 GB", "70.9 tok/s", "900 GB/s"):
        assert figure in page, figure
    assert "reference-story.md" in (ROOT / "mkdocs.yml").read_text()
