"""--list-gpus shows each card's confidence tag; every tag it shows is explained under the table (issue 39)."""

from __future__ import annotations

import re

from conftest import run_cli

from doctor.knowledge.gpus import GPUS
from doctor.model.confidence import CONFIDENCE


def test_every_tag_shown_has_its_meaning_below():
    proc = run_cli("--list-gpus")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    shown = {m.group(1) for line in lines for m in [re.search(r"\[([A-Z])\]$", line)] if m}
    assert shown and shown <= set(CONFIDENCE)
    legend = lines[-1]
    for tag in shown:
        assert f"[{tag}] {CONFIDENCE[tag]}" in legend


def test_every_knowledge_tag_has_a_meaning():
    assert {g.confidence for g in GPUS} <= set(CONFIDENCE)
