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


def _live(name: str, **plan):
    loaded = load_document(str(MACHINES / name))
    from dataclasses import replace

    return Run(ThisMachine(), options=GatherOptions(reader=lambda: loaded.facts),
               plan_overrides=lambda base: replace(base, **plan)).execute()


def test_a_live_run_without_a_model_says_why_there_is_no_verdict_and_what_to_add():
    """Issue 39: `v100-doctor --no-tui` with no --model ran no probe and printed no verdict, and said nothing."""
    from doctor.render.markdown import render_markdown
    from doctor.render.panels import no_probe_hint

    report = _live("v100-pcie-16gb-healthy.json")
    hint = no_probe_hint(report)
    assert report.probe is None and report.verdict is None
    assert "--model DIR" in hint and "v100-doctor probe --synthetic" in hint
    assert " ".join(hint.split()) in " ".join(render_text(report).split())
    assert "--model DIR" in render_markdown(report)


def test_no_probe_hint_where_it_would_be_wrong():
    from doctor.render.panels import no_probe_hint

    assert no_probe_hint(_live_without_gpu()) == ""  # no GPU: the no-GPU hint speaks
    replay = no_probe_hint(Run(SavedFile(str(MACHINES / "v100-pcie-16gb-healthy.json"))).execute())
    assert "--model DIR" in replay and "probe --synthetic" not in replay  # a replay times nothing: where the probe runs
    with_model = _live("v100-pcie-16gb-healthy.json", model_path="/models/qwen")
    assert no_probe_hint(with_model) == ""  # --model given: the probe stage's own line says why it did not run
