"""Issue 22: one meaning of replay in every face. For every bundled example and every fixture that is a saved
report or facts file, `--replay FILE` as plain text, JSON and Markdown, `demo NAME` (examples), and the TUI opened
on the file (and again after `r`) give the same findings, the same verdict and the same exit code; a recorded
probe keeps its measured speed in each of them.
"""

from __future__ import annotations

import asyncio
import json
import re
import time

import pytest
from conftest import ROOT

from doctor.cli import main
from doctor.cli.options import build_parser
from doctor.cli.output import exit_code_for
from doctor.cli.tui import session_from_args
from doctor.model.serialize import to_jsonable
from doctor.render.common import SYMBOLS

EXAMPLES = sorted((ROOT / "doctor" / "examples").glob("*.json"))
FIXTURES = [p for folder in ("machines", "models", "samples", "bundle", "probes")
            for p in sorted((ROOT / "fixtures" / folder).glob("*.json"))
            if '"schema"' in p.read_text()[:4000]]  # reports and facts files (the probes' own fixtures are not reports)
SYMBOL_OF = {status.value: symbol for status, symbol in SYMBOLS.items()}
TEXT_LINE = re.compile(r"^\[(.)\] ([a-z0-9][a-z0-9-]*): ")  # "[✗] cuda-pairing: ..." (not "[✗] GPU 1 ...")
MARKDOWN_ROW = re.compile(r"^\| (.) \| `([a-z0-9-]+)` \|")


def cli(capsys, *argv: str) -> tuple[str, int]:
    code = main(list(argv))
    captured = capsys.readouterr()
    assert captured.out, captured.err
    return captured.out, code


def text_findings(out: str) -> dict[str, str]:
    return {m.group(2): m.group(1) for line in out.splitlines() if (m := TEXT_LINE.match(line))}


def markdown_findings(out: str) -> dict[str, str]:
    rows = {}
    for line in out.splitlines():
        if line.startswith("### ") and rows:  # the host's table comes first; each GPU's own table after it
            break
        if m := MARKDOWN_ROW.match(line):
            rows.setdefault(m.group(2), m.group(1))
    return rows


def json_findings(doc: dict) -> dict[str, str]:
    return {f["id"]: SYMBOL_OF[f["status"]] for f in doc["findings"]}


def report_findings(report) -> dict[str, str]:
    return {f.id: SYMBOLS[f.status] for f in report.findings}


def tui_faces(path: str):
    """The TUI opened on the file as `v100-doctor --replay FILE` opens it: its checklist, report and verdict panel
    once the run is done, and again after `r`."""
    from doctor.tui.app import DoctorApp

    session = session_from_args(build_parser().parse_args(["--replay", path]), None)
    app = DoctorApp(session)

    async def done(pilot, before=None) -> None:
        deadline = time.monotonic() + 60
        while (app.report is None or app.report is before or not app.main_screen.query("VerdictPanel")) \
                and time.monotonic() < deadline:  # the panel mounts after the check list is drawn (issue 29)
            await pilot.pause(0.02)
        await pilot.pause()

    def seen():
        symbols = {cid: app.checklist.symbol_of(cid) for cid in app.checklist.findings
                   if "/" not in cid}  # not another GPU's own lines ("gpu1/cuda-pairing", issue 23)
        return symbols, app.report, app.main_screen.query_one("VerdictPanel").view

    async def script():
        async with app.run_test(size=(120, 40)) as pilot:
            await done(pilot)
            opened = seen()
            await pilot.press("r")
            await done(pilot, opened[1])
            return opened, seen()

    return asyncio.run(asyncio.wait_for(script(), 120))


def _name(path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("path", EXAMPLES + FIXTURES, ids=_name)
def test_every_face_of_a_replay_gives_the_same_findings_verdict_and_exit_code(path, capsys):
    text, text_code = cli(capsys, "--replay", str(path), "--no-tui")
    raw, json_code = cli(capsys, "--replay", str(path), "--json", "--no-redact")
    markdown, markdown_code = cli(capsys, "--replay", str(path), "--markdown", "--no-redact")
    doc = json.loads(raw)
    findings, verdict = json_findings(doc), doc.get("verdict")
    assert findings, "the replay ran no check"
    assert text_findings(text) == findings
    assert markdown_findings(markdown) == findings
    assert text_code == json_code == markdown_code

    if path.parent.name == "examples":  # `demo NAME` is the same replay under the example's name
        demo, demo_code = cli(capsys, "demo", path.stem, "--json", "--no-redact")
        demo_doc = json.loads(demo)
        assert json_findings(demo_doc) == findings and demo_doc.get("verdict") == verdict and demo_code == json_code

    opened, rerun = tui_faces(str(path))
    for symbols, report, panel in (opened, rerun):
        assert report_findings(report) == findings and symbols == findings
        assert to_jsonable(report.verdict) == verdict
        assert exit_code_for(report) == json_code
        assert (panel is None) == (verdict is None)

    probe = opened[1].probe
    assert to_jsonable(probe) == doc.get("probe") == to_jsonable(rerun[1].probe)  # kept whole, as recorded
    if probe is not None and probe.result is not None:  # the speed measured on the recorded machine, in every face
        measured = verdict["measured_tok_s"] if verdict else probe.result.decode_tok_s
        assert f"{measured:.1f} tok/s" in text and f"{measured:.1f} tok/s" in markdown
        if verdict:
            assert opened[2].measured_tok_s == rerun[2].measured_tok_s == measured


def test_a_report_holding_a_probe_keeps_it_on_replay(tmp_path, capsys):
    """The defect of issue 22: a user's report with a probe, replayed, printed "9 passed, 1 skipped" and exit 0,
    the measured speed and the offload warning gone. Now the probe is kept, labelled as recorded there, and judged
    by today's verdict."""
    saved = tmp_path / "ticket.json"
    out, _ = cli(capsys, "demo", "seed-2-exl2-4.25bpw", "--json", "--no-redact")
    doc = json.loads(out)
    doc["source"] = "live"  # as the user's own `v100-doctor --model ... -o ticket.json` wrote it
    saved.write_text(json.dumps(doc))

    text, code = cli(capsys, "--replay", str(saved), "--no-tui")
    assert code == 1 and "25.0 tok/s" in text and "1 warning" in text
    assert "facts and probe as recorded there, checks and verdict of today" in " ".join(text.split())
    replayed = json.loads(cli(capsys, "--replay", str(saved), "--json", "--no-redact")[0])
    assert replayed["source"] == f"replay:{saved}" and replayed["verdict"]["measured_tok_s"] == 25.0
    assert replayed["probe"] == doc["probe"]
