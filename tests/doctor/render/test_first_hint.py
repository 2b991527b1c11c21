"""A live run on a machine without a GPU says what the doctor can still do, in plain text as in the TUI (issue 26)."""

from __future__ import annotations

from conftest import MACHINES

from doctor.facts.replay import load_document
from doctor.facts.source import GatherOptions
from doctor.model.source import SavedFile, ThisMachine
from doctor.render.panels import no_gpu_hint
from doctor.render.text import render_text
from doctor.run.run import Run


def _live_without_gpu():
    loaded = load_document(str(MACHINES / "no-nvml.json"))
    return Run(ThisMachine(), options=GatherOptions(reader=lambda: loaded.facts)).execute()


def test_plain_text_ends_with_the_tuis_hint():
    report = _live_without_gpu()
    hint = no_gpu_hint(report)
    assert hint.startswith("No GPU here: plan for a card with --target-gpu NAME")
    assert " ".join(render_text(report).split()).endswith(" ".join(hint.split()))


def test_a_replay_or_a_machine_with_a_gpu_gets_no_hint():
    for name in ("no-nvml.json", "v100-pcie-16gb-healthy.json"):
        report = Run(SavedFile(str(MACHINES / name))).execute()
        assert no_gpu_hint(report) == "" and "No GPU here" not in render_text(report)
