"""Issue 13: what a new user meets after the first frame: the list opens on the problem, escape comes back,
help, filter, palette and ctrl+c work, a probe that cannot run says so once, and nothing is cut."""

from __future__ import annotations

import pytest
from tui_support import HEALTHY, TORCH_211, fixture_session, live_without_gpu, run_app, settle

from checks.manifest import ENV_CHECKS
from doctor.model.findings import Status
from doctor.tui.app import DoctorApp
from doctor.tui.help_screen import HelpScreen
from doctor.tui.save_dialog import SaveDialog


def drawn(widget) -> str:
    """The widget's lines as drawn now."""
    return "\n".join("".join(seg.text for seg in widget.render_line(y)) for y in range(widget.size.height))


@pytest.mark.parametrize("fixture, opens_on", [
    ("p40-r470-torch-2.1-cu121.json", "cuda-pairing"),  # a warning comes first in the list, the failure wins
    ("v100-nvcc-11.8-torch-cu121.json", "exllamav2-ready"),  # a warning, then the failure further down
    ("p40-torch-cu126.json", "compute-capability"),  # warnings only: the first warning
])  # all well: the top (test_app.py's key test starts there on the healthy V100)
def test_the_list_opens_on_the_first_failure_else_the_first_warning(fixture, opens_on):
    async def script(app, pilot):
        await settle(app, pilot)
        return app.checklist.highlighted_id, app.detail.finding.id

    assert run_app(DoctorApp(fixture_session(fixture, checks=None)), script) == (opens_on, opens_on)


def test_a_saved_report_opens_on_its_failure_and_a_live_run_where_the_user_left_the_cursor():
    async def opened(app, pilot):
        await settle(app, pilot)
        return app.checklist.highlighted_id

    assert run_app(DoctorApp(fixture_session(TORCH_211, checks=None)), opened) == "cuda-pairing"

    async def moved(app, pilot):  # the user went down while the checks ran: the list stays where they put it
        for _ in range(200):  # the checks are listed once the run starts, after the first frame (slower under load)
            if app.checklist.option_count > 1 or app.report is not None:
                break
            await pilot.pause(0.01)
        app.checklist.highlighted = 1
        await settle(app, pilot)
        return app.checklist.highlighted_id

    assert run_app(DoctorApp(fixture_session(TORCH_211)), moved) == "compute-capability"


def test_escape_from_the_filter_and_from_a_focused_detail_returns_to_the_list():
    async def script(app, pilot):
        await settle(app, pilot)
        await pilot.press("tab")  # the details, not full-screen
        in_detail = app.focused is app.detail
        await pilot.press("escape")
        from_detail = app.focused is app.checklist
        await pilot.press("slash", "f", "l", "a")
        filtered = app.checklist.shown_ids
        await pilot.press("escape")
        return in_detail, from_detail, filtered, app.checklist.shown_ids, app.focused is app.checklist

    in_detail, from_detail, filtered, after, focused = run_app(DoctorApp(fixture_session(TORCH_211)), script)
    assert in_detail and from_detail and filtered == ["flash-attn"]
    assert after == [c.id for c in ENV_CHECKS] and focused


def test_slash_filters_by_id_or_title_and_enter_goes_back_to_the_list():
    async def script(app, pilot):
        await settle(app, pilot)
        await pilot.press("slash", *"pyt", "enter")  # cuda-pairing's title: "Driver, CUDA and PyTorch pairing"
        kept = app.checklist.shown_ids, app.checklist.highlighted_id, app.focused is app.checklist
        await pilot.press("slash", *"zzz")
        return kept, app.checklist.shown_ids, app.detail.query_one("#detail-head").render().plain

    kept, nothing, placeholder = run_app(DoctorApp(fixture_session(TORCH_211)), script)
    assert kept == (["cuda-pairing"], "cuda-pairing", True)
    assert nothing == [] and "no check matches" in placeholder and "escape" in placeholder


def test_help_lists_every_key_and_escape_closes_it():
    from doctor.tui.keys import MAIN_KEYS

    async def script(app, pilot):
        await settle(app, pilot)
        await pilot.press("f1", "escape", "question_mark")  # both open it
        shown = app.screen
        text = " ".join(drawn(s) for s in shown.query("Static")) if isinstance(shown, HelpScreen) else ""
        await pilot.press("escape")
        return isinstance(shown, HelpScreen), " ".join(text.split()), type(app.screen).__name__

    opened, text, after = run_app(DoctorApp(fixture_session(HEALTHY)), script, size=(100, 40))
    assert opened and after == "Screen"
    missing = [keys for keys, what in MAIN_KEYS if " ".join(keys.split()) not in text or " ".join(what.split()[:3]) not in text]
    assert missing == []


def test_the_help_table_names_every_bound_key():
    """The help screen and the docs list doctor/tui/keys.py; every binding of the screens is in it."""
    from doctor.tui.checklist import Checklist
    from doctor.tui.detail import DetailPane
    from doctor.tui.keys import MAIN_KEYS, STORY_KEYS, key_names
    from doctor.tui.story import StoryScreen

    aliases = {"question_mark": "?", "slash": "/", "down": "↓", "up": "↑", "left": "←", "right": "→"}

    def bound(*classes) -> set[str]:
        return {aliases.get(k.strip(), k.strip()) for cls in classes for b in cls.BINDINGS
                for k in b.key.split(",") if b.action != "noop"}

    assert bound(DoctorApp, Checklist, DetailPane) - key_names(MAIN_KEYS) == set()
    assert bound(StoryScreen) - key_names(STORY_KEYS) == set()
    assert key_names(MAIN_KEYS) - bound(DoctorApp, Checklist, DetailPane) <= {"ctrl+p", "ctrl+q"}  # textual's own


def test_ctrl_c_quits_instead_of_a_toast():
    async def script(app, pilot):
        await settle(app, pilot)
        await pilot.press("ctrl+c")
        await pilot.pause()
        return app.is_running if hasattr(app, "is_running") else None, app.return_value

    running, value = run_app(app := DoctorApp(fixture_session(HEALTHY)), script)
    assert value is app.report and value is not None and not running


def test_the_command_palette_finds_a_check_and_opens_it():
    from textual.command import CommandPalette

    async def script(app, pilot):
        await settle(app, pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        opened = isinstance(app.screen, CommandPalette)
        await pilot.press(*"flash-attn")
        for _ in range(50):  # the palette searches in the background
            await pilot.pause(0.02)
            if "Check: flash-attn" in str(app.screen.query_one("CommandList").get_option_at_index(0).prompt) \
                    if app.screen.query("CommandList") and app.screen.query_one("CommandList").option_count else False:
                break
        await pilot.press("enter")
        await pilot.pause()
        return opened, app.checklist.highlighted_id, app.detail.finding.id

    assert run_app(DoctorApp(fixture_session(TORCH_211)), script) == (True, "flash-attn", "flash-attn")


def test_the_palette_offers_the_actions():
    async def script(app, pilot):
        await settle(app, pilot)
        return [c.title for c in app.get_system_commands(app.screen)]

    titles = run_app(DoctorApp(fixture_session(HEALTHY)), script)
    assert {"Run the timed probe (live runs only)", "Save the JSON report (redacted unless --no-redact)",
            "Filter the checks by id or title (escape clears it)", "This help"} <= set(titles)
    assert "The story view (demo only)" not in titles  # no story outside the demo


def test_a_probe_that_cannot_run_says_why_once_and_nothing_animates():
    """--target-gpu on a machine without a GPU: the probe's own skip reason, with what would run it."""
    from doctor.model.source import TargetCard
    from doctor.run.live_probe import run_probe_for_tui

    session = live_without_gpu(checks=ENV_CHECKS, source=TargetCard("v100-pcie-16gb"), run_probe=run_probe_for_tui)

    async def script(app, pilot):
        await settle(app, pilot)
        await pilot.press("p")
        await app.workers.wait_for_complete()
        await pilot.pause()
        probe = app.query_one("#probe")
        return (app.probe_state.state, app.query_one("#probe-progress").display, app.query_one("#verdict").display,
                str(app.query_one("#probe-phase").render()), probe.border_title, app.checklist.findings["probe"])

    state, bar, verdict, text, title, finding = run_app(DoctorApp(session), script)
    assert state == "skipped" and bar is False and verdict is False and title == "No probe"
    assert "planning for v100-pcie-16gb" in text and "on a machine with that card measures it" in text
    assert finding.status is Status.SKIP


def test_a_live_run_without_a_gpu_points_at_target_gpu_and_demo():
    async def script(app, pilot):
        await settle(app, pilot)
        hint = app.query_one("#hint")
        return hint.display, str(hint.render())

    shown, text = run_app(DoctorApp(live_without_gpu(checks=ENV_CHECKS)), script)
    assert shown and "--target-gpu" in text and "v100-doctor demo" in text

    async def replayed(app, pilot):
        await settle(app, pilot)
        return app.query_one("#hint").display

    assert run_app(DoctorApp(fixture_session("no-nvml.json")), replayed) is False  # a replay is not this machine


def test_details_show_an_unknown_fact_as_unknown_with_its_reason_never_none():
    async def script(app, pilot):
        await settle(app, pilot)
        app.view.show_check("gpu-present")
        await pilot.pause()
        return drawn(app.detail.query_one("#detail-evidence"))

    text = run_app(DoctorApp(live_without_gpu(checks=ENV_CHECKS)), script)
    assert "None" not in text and "driver_version" in text and "unknown (" in text


@pytest.mark.parametrize("size", [(80, 24)])
def test_skip_reasons_wrap_whole_words_instead_of_stopping_at_needs(size):
    async def script(app, pilot):
        await settle(app, pilot)
        return {cid: app.checklist.get_option(cid).prompt.plain for cid in ("flash-attn", "cuda-pairing")}

    prompts = run_app(DoctorApp(live_without_gpu(checks=ENV_CHECKS)), script, size=size)
    assert " ".join(prompts["flash-attn"].split()[1:]) == "flash-attn needs compute-capability"


@pytest.mark.parametrize("key, size", [("m", (120, 40))])  # the longest title, cut before even at 120 columns
def test_the_save_dialog_shows_its_whole_title_and_keys(size, key):
    async def script(app, pilot):
        await settle(app, pilot)
        await pilot.press(key)
        await pilot.pause()
        dialog = app.screen
        title, keys = dialog.query_one("#save-title"), dialog.query_one("#save-keys")
        visible = "\n".join(line.text for line in (title.render_line(y) for y in range(title.size.height)))
        return isinstance(dialog, SaveDialog), dialog.what, " ".join(visible.split()), keys.region.height

    is_dialog, what, visible, keys_height = run_app(DoctorApp(fixture_session(HEALTHY)), script, size=size)
    assert is_dialog and f"Save the {what} to:" in visible and keys_height == 1


def test_the_docs_list_every_key_and_show_the_story_view():
    from conftest import ROOT

    from doctor.tui.keys import MAIN_KEYS, STORY_KEYS

    keys = (ROOT / "docs" / "reference" / "keys.md").read_text()
    for keys_, what in MAIN_KEYS + STORY_KEYS:
        assert f"| {' '.join(f'`{k}`' for k in keys_.split())} | {what} |" in keys
    tui = (ROOT / "docs" / "tui.md").read_text()
    assert "Tesla V100-PCIE-16GB: 4 → 25 → 40 → 64 tok/s" in tui and "stage 4 of 4" in tui
    assert "reference/keys.md" in tui
