"""The banner's words (doctor/tui/banner.py): where the shown facts come from, before and after the report, and how
a run ended."""

from __future__ import annotations

from conftest import MACHINES
from tui_support import TORCH_211

from checks.manifest import ENV_CHECKS
from doctor.facts.replay import load_document
from doctor.model.source import BundledExample, SavedFile, ThisMachine
from doctor.render.common import summary_counts
from doctor.run.pipeline import diagnose
from doctor.run.session import story_session
from doctor.tui.banner import source_text, summary_text


def test_before_the_report_the_banner_names_the_source_asked_for():
    assert source_text(None, SavedFile(str(MACHINES / TORCH_211))) == \
        f"replayed from {TORCH_211}: recorded facts, today's checks"
    assert source_text(None, BundledExample("seed-1")) == "RECORDED EXAMPLE (seed-1), not this machine"
    assert source_text(None, ThisMachine()) == "this machine, live"


def test_a_live_report_is_this_machine_and_an_example_says_it_is_recorded():
    loaded = load_document(str(MACHINES / TORCH_211))
    assert source_text(diagnose(loaded.plan, loaded.facts, checks=ENV_CHECKS), ThisMachine()) == "this machine, live"
    stage = "seed-2-exl2-4.25bpw"
    example = dict(story_session(stage).story)[stage]
    assert "not this machine" in source_text(example, BundledExample(stage)).lower()


def test_the_summary_counts_the_findings_and_is_empty_without_a_report():
    loaded = load_document(str(MACHINES / TORCH_211))
    report = diagnose(loaded.plan, loaded.facts, checks=ENV_CHECKS)
    assert summary_text(None) == ""
    assert summary_text(report) == summary_counts(report) and "1 failed" in summary_text(report)  # one GPU, no errors
