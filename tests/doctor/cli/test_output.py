"""Every report output is redacted by default (--json, -o, --markdown; the TUI's save in tests/doctor/tui), and a
redacted report replays to the same findings on every recorded machine."""

from __future__ import annotations

import json

import pytest
from conftest import MACHINES, ROOT, run_cli
from identity_support import HOME, HOSTNAME, leaked, planted_fixture

from doctor.facts.replay import load_document
from doctor.model.report import parse_document, report_to_dict, report_to_json
from doctor.model.source import replayed as replay_of
from doctor.render.markdown import render_markdown
from doctor.render.redact import shareable
from doctor.run.pipeline import diagnose

RECORDED = sorted(MACHINES.glob("*.json")) + sorted((ROOT / "doctor" / "examples").glob("*.json"))


@pytest.mark.parametrize("flags", [["--markdown"], ["--no-tui", "-o", "{out}"], ["--json", "-o", "{out}"]],
                         ids=["markdown", "o-file", "json-and-o"])
def test_no_report_output_carries_the_planted_identity(tmp_path, flags):
    out = tmp_path / "report.json"
    done = run_cli("--replay", str(planted_fixture(tmp_path)), *[f.format(out=out) for f in flags])
    assert done.returncode == 2, done.stderr  # the cu130 V100 fails cuda-pairing, redacted or not
    written = out.read_text() if out.exists() else ""
    assert leaked(done.stdout) == [] and leaked(written) == []
    if flags[0] == "--json":
        doc = json.loads(done.stdout)
        assert doc["facts"]["host"]["hostname"] == "redacted-host"
        assert doc["facts"]["python"]["executable"] == "~/venvs/llm/bin/python"


def test_no_redact_keeps_everything(tmp_path):
    done = run_cli("--replay", str(planted_fixture(tmp_path)), "--json", "--no-redact")
    doc = json.loads(done.stdout)
    assert doc["facts"]["host"]["hostname"] == HOSTNAME and doc["facts"]["python"]["executable"].startswith(HOME)


@pytest.mark.parametrize("machine", ["v100-torch-2.11-cu130.json", "dgx1-8x-v100.json", "cuda-visible-uuids.json",
                                     "mig-a100-beside-v100s.json", "no-nvml.json"])
def test_the_shareable_report_is_redacted_in_json_and_markdown(tmp_path, machine):
    loaded = load_document(str(planted_fixture(tmp_path, machine)))
    report = diagnose(loaded.plan, loaded.facts)
    assert leaked(report_to_json(report))  # the planted values are there to be found
    shared = shareable(report)
    assert leaked(report_to_json(shared)) == [] and leaked(render_markdown(shared)) == []
    assert shareable(report, redact=False) is report


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.stem)
def test_a_redacted_report_replays_to_the_same_findings(path):
    loaded = load_document(str(path))
    report = diagnose(loaded.plan, loaded.facts)
    again = parse_document(report_to_dict(shareable(report)), "redacted.json")
    replayed = diagnose(again.plan, again.facts, source=replay_of("redacted.json"))
    assert [(f.id, f.status) for f in replayed.all_findings()] == [(f.id, f.status) for f in report.all_findings()]


@pytest.mark.parametrize("flags", [("--no-tui",), ("--json",)])
def test_check_of_a_skipped_check_never_exits_0(flags):
    """Issue 23: `--check cuda-pairing` on a machine where it was skipped said "all checks passed" (exit 0)."""
    proc = run_cli("--replay", str(MACHINES / "no-nvml.json"), "--check", "cuda-pairing", *flags)
    assert proc.returncode == 5 and "did not run" in proc.stderr, proc.stderr
    ran = run_cli("--replay", str(MACHINES / "no-nvml.json"), "--check", "gpu-present", *flags)
    assert ran.returncode != 5  # a check that ran keeps its own code
