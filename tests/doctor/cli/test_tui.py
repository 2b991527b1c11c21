"""`v100-doctor` chooses the TUI only on an interactive terminal, and --replay opens a saved report read-only."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time

from conftest import MACHINES, ROOT, run_cli
from tui_support import HEALTHY, recorded_probe, run_app, settle

from checks.manifest import ENV_CHECKS
from doctor.cli.options import build_parser
from doctor.cli.tui import session_from_args
from doctor.facts.replay import load_document
from doctor.model.report import report_to_json
from doctor.model.source import SavedFile
from doctor.run.pipeline import diagnose
from doctor.run.probe_stage import with_probe
from doctor.tui.app import DoctorApp

IMPORTS_AFTER = """
import sys, doctor.cli
code = doctor.cli.main(sys.argv[1:])
print("TEXTUAL:" + str("textual" in sys.modules), "CODE:" + str(code))
"""


def in_a_terminal(*args: str, wait_for: bytes, keys: bytes = b"q", timeout: float = 30.0) -> tuple[bytes, int]:
    """Run `python -m doctor ARGS` on a pseudo-terminal, press `keys` once `wait_for` is on screen; output and exit code."""
    master, slave = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "80", "LINES": "24"}
    proc = subprocess.Popen([sys.executable, "-m", "doctor", *args], stdin=slave, stdout=slave, stderr=slave, env=env,
                            cwd=ROOT, start_new_session=True)
    os.close(slave)
    seen, sent, deadline = b"", False, time.monotonic() + timeout
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if select.select([master], [], [], 0.05)[0]:
                try:
                    seen += os.read(master, 65536)
                except OSError:
                    break
            if not sent and wait_for in seen:
                time.sleep(0.3)
                os.write(master, keys)
                sent = True
        code = proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        try:
            while select.select([master], [], [], 0.05)[0]:
                seen += os.read(master, 65536)
        except OSError:
            pass
        os.close(master)
    return seen, code


def test_a_terminal_gets_the_tui_and_q_leaves_with_the_reports_exit_code():
    out, code = in_a_terminal("--replay", str(MACHINES / "v100-torch-2.11-cu130.json"), wait_for=b" failed, ")
    assert b"\x1b[?1049h" in out  # the alternate screen: textual drew the TUI
    assert b"cuda-pairing" in out and code == 2  # a failed check, as in the plain-text run
    assert b"(plain text: v100-doctor --no-tui)" in out


def test_pipes_no_tui_json_and_markdown_stay_headless():
    fixture = str(MACHINES / HEALTHY)
    for extra in ([], ["--no-tui"], ["--json"], ["--markdown"]):
        out = subprocess.run([sys.executable, "-c", IMPORTS_AFTER, "--replay", fixture, *extra], capture_output=True,
                             text=True, cwd=ROOT, timeout=60).stdout
        assert out.strip().splitlines()[-1] == "TEXTUAL:False CODE:0", extra
    assert "Summary:" in run_cli("--replay", fixture).stdout


def test_a_saved_report_with_its_probe_replays_read_only_with_panels(tmp_path):
    loaded = load_document(str(MACHINES / HEALTHY))
    saved = with_probe(diagnose(loaded.plan, loaded.facts, checks=ENV_CHECKS), recorded_probe("v100-healthy-near-ceiling"))
    path = tmp_path / "ticket.json"
    path.write_text(report_to_json(saved))
    session = session_from_args(build_parser().parse_args(["--replay", str(path)]), ENV_CHECKS)

    async def script(app, pilot):
        await settle(app, pilot)
        return (app.query_one("#probe-row").display, app.probe_state, app.query_one("VerdictPanel").view,
                app.checklist.symbol_of("decode-speed"), app.banner.source)

    shown, probe, verdict, decode, source = run_app(DoctorApp(session), script)
    assert session.run.source == SavedFile(str(path)) and session.run_probe is None
    assert "read-only" in session.no_probe_reason
    assert shown and "recorded facts and probe" in source
    assert probe.state == "done" and probe.reported_tok_s == 64.05 and probe.tok_s == (63.409, 64.05, 64.37)
    assert (verdict.measured_tok_s, verdict.reference_tok_s) == (64.05, 64.0) and verdict.fix_first == ""
    assert verdict.limit_options.startswith("use 3.25 bpw")  # at the card's limit: options, not "Fix first"
    assert decode == "✓"
    assert json.loads(path.read_text())["verdict"]["near_ceiling"] is True


def test_a_recorded_example_opens_labelled_with_todays_checks_and_verdict():
    example = ROOT / "doctor" / "examples" / "seed-2-exl2-4.25bpw.json"
    session = session_from_args(build_parser().parse_args(["--replay", str(example)]), None)

    async def script(app, pilot):
        await settle(app, pilot)
        return app.banner.source, app.query_one("VerdictPanel").view, app.checklist.symbol_of("decode-speed")

    source, verdict, decode = run_app(DoctorApp(session), script)
    assert source.startswith("RECORDED EXAMPLE (seed-2-exl2-4.25bpw), not this machine")
    assert session.run_probe is None and verdict is not None and verdict.measured_tok_s == 25.0
    assert decode in ("!", "✗")  # 25 tok/s is far from the ceiling: the verdict is not a pass
