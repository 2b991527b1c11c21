"""Saving and copying from the TUI (doctor/tui/save_flow.py), driven with App.run_test() and Pilot: s saves JSON
that validates, m saves Markdown and copies it, c copies the shown check's fix commands, and all of it is redacted
unless --no-redact."""

from __future__ import annotations

import json

from conftest import MACHINES
from tui_support import HEALTHY, TORCH_211, fixture_session, run_app, settle

from checks.manifest import ENV_CHECKS
from doctor.facts.replay import load_document
from doctor.facts.source import GatherOptions
from doctor.run.run import Run
from doctor.run.session import Session
from doctor.tui.app import DoctorApp
from doctor.tui.save_dialog import SaveDialog


def test_s_saves_a_report_that_validates_against_the_schema(tmp_path, validate):
    target = tmp_path / "ticket.json"

    async def script(app, pilot):
        await settle(app, pilot)
        await pilot.press("s")
        dialog = app.screen
        default = dialog.query_one("#save-path").value
        dialog.query_one("#save-path").value = str(target)
        await pilot.press("enter")
        await pilot.pause()
        return isinstance(dialog, SaveDialog), default, [n.message for n in app._notifications]

    was_dialog, default, notes = run_app(DoctorApp(fixture_session(TORCH_211)), script)
    doc = validate(json.loads(target.read_text()))
    assert was_dialog and default.startswith("v100-doctor-report-") and default.endswith(".json")
    assert doc["source"] == f"replay:{MACHINES / TORCH_211}"
    assert {f["id"]: f["status"] for f in doc["findings"]}["cuda-pairing"] == "fail"
    assert any(str(target) in n for n in notes)  # it says where


def test_s_defaults_to_the_output_file_and_escape_cancels(tmp_path):
    target = tmp_path / "from-o.json"

    async def script(app, pilot):
        await settle(app, pilot)
        await pilot.press("s")
        default = app.screen.query_one("#save-path").value
        await pilot.press("escape")
        return default, type(app.screen).__name__

    default, screen = run_app(DoctorApp(fixture_session(HEALTHY, save_path=str(target))), script)
    assert default == str(target) and screen == "Screen" and not target.exists()


def test_m_saves_markdown_and_puts_it_on_the_clipboard(tmp_path):
    target = tmp_path / "issue.md"

    async def script(app, pilot):
        await settle(app, pilot)
        await pilot.press("m")
        app.screen.query_one("#save-path").value = str(target)
        await pilot.press("enter")
        await pilot.pause()
        return app.clipboard

    clipboard = run_app(DoctorApp(fixture_session(TORCH_211)), script)
    text = target.read_text()
    assert text.startswith("### v100-doctor") and "| ✗ | `cuda-pairing` |" in text
    assert clipboard == text


def test_c_copies_the_fix_commands_of_the_shown_check():
    async def script(app, pilot):
        await settle(app, pilot)
        await pilot.press("c")  # on the failure it opened on
        return app.clipboard, app.detail.finding.commands

    clipboard, commands = run_app(DoctorApp(fixture_session(TORCH_211)), script)
    assert clipboard == "\n".join(commands) and "pip install" in clipboard


def _save_planted(tmp_path, **kw):
    from identity_support import planted_fixture

    loaded = load_document(str(planted_fixture(tmp_path)))
    session = Session(run=Run(checks=ENV_CHECKS, options=GatherOptions(reader=lambda: loaded.facts)), **kw)
    json_out, md_out = tmp_path / "ticket.json", tmp_path / "issue.md"

    async def script(app, pilot):
        await settle(app, pilot)
        for key, target in (("s", json_out), ("m", md_out)):
            await pilot.press(key)
            app.screen.query_one("#save-path").value = str(target)
            await pilot.press("enter")
            await pilot.pause()
        return app.clipboard

    clipboard = run_app(DoctorApp(session), script)
    return json_out.read_text() + md_out.read_text() + clipboard


def test_the_tuis_save_and_clipboard_are_redacted_unless_no_redact(tmp_path):
    from identity_support import HOSTNAME, leaked

    assert leaked(_save_planted(tmp_path)) == []
    assert HOSTNAME in _save_planted(tmp_path, redact=False)
