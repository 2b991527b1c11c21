"""The TUI at 60x15, 70x24 and 80x24 (issue 26): after a story stage opens, keys reach the list (not a hidden filter
box), a filter does not outlive the report it was typed on, the story's s/m/c work as the full report's do, and the
footer shows every key of the screen."""

from __future__ import annotations

import re

import pytest
from tui_support import HEALTHY, fixture_session, run_app, settle

from doctor.run.session import story_session
from doctor.tui.app import DoctorApp
from doctor.tui.save_dialog import SaveDialog
from doctor.tui.story import StoryScreen

SIZES = [(60, 15), (70, 24), (80, 24)]


async def story_open(app, pilot) -> None:
    """The demo opens its story after the first refresh: wait for it (a loaded machine takes longer)."""
    for _ in range(200):
        await pilot.pause(0.05)
        if isinstance(app.screen, StoryScreen):
            break
    await pilot.pause()


def screen_text(app) -> str:
    import html

    svg = app.export_screenshot()
    return html.unescape("".join(re.findall(r"<text[^>]*>(.*?)</text>", svg))).replace("\xa0", " ")


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_after_a_stage_opens_j_moves_and_q_quits(size):
    async def script(app, pilot):
        await story_open(app, pilot)
        await pilot.press("enter")
        await pilot.pause()
        opened = app.checklist.highlighted_id
        focus_after_open = app.focused is not app.filter_input
        await pilot.press("j")
        await pilot.pause()
        moved = app.checklist.highlighted_id
        await pilot.press("q")
        await pilot.pause()
        return focus_after_open, opened, moved, app.checklist.filter_text

    focus_ok, opened, moved, typed = run_app(app := DoctorApp(story_session()), script, size=size)
    assert focus_ok and typed == "" and moved != opened
    assert app.return_value is not None or app.report is not None  # q left the app instead of filtering for "q"


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_a_filter_is_cleared_when_its_report_is_left_for_the_story(size):
    async def script(app, pilot):
        await story_open(app, pilot)
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("slash", "g", "p", "u", "enter")
        await pilot.pause()
        filtered = app.checklist.filter_text
        await pilot.press("escape")
        await pilot.pause()
        in_story = isinstance(app.screen, StoryScreen)
        await pilot.press("enter")
        await pilot.pause()
        return filtered, in_story, app.checklist.filter_text, app.filter_input.value

    filtered, in_story, after, box = run_app(DoctorApp(story_session()), script, size=size)
    assert filtered == "gpu" and in_story and after == "" and box == ""


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_story_saves_and_copies_the_selected_stage(size):
    async def script(app, pilot):
        await story_open(app, pilot)
        await pilot.press("l")  # stage 2
        await pilot.pause()
        name = app.screen.selected.name
        await pilot.press("s")
        await pilot.pause()
        json_dialog = isinstance(app.screen, SaveDialog) and app.screen.what
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("m")
        await pilot.pause()
        md_dialog = isinstance(app.screen, SaveDialog) and app.screen.what
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("c")
        await pilot.pause()
        return name, json_dialog, md_dialog, app.clipboard, app.report.source.name

    name, json_dialog, md_dialog, clipboard, saved = run_app(DoctorApp(story_session()), script, size=size)
    assert json_dialog == "JSON report" and md_dialog and md_dialog.startswith("Markdown")
    assert saved == name and clipboard  # the Markdown of that stage, or its first fix's commands


def footer_hints(app) -> list[str]:
    """The footer's key hints that are drawn whole inside the screen's width."""
    from textual.widgets._footer import FooterKey

    width = app.size.width
    return [f"{k.key_display} {k.description}" for k in app.screen.query(FooterKey)
            if k.display and k.region.width and k.region.right <= width]


@pytest.mark.parametrize("size", [(80, 24), (120, 30)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_footer_shows_every_key_of_the_screen(size):
    async def main_screen(app, pilot):
        await settle(app, pilot)
        await pilot.pause(0.2)
        return footer_hints(app)

    async def story(app, pilot):
        for _ in range(100):  # the story opens after the first refresh; its footer is composed a frame later
            await pilot.pause(0.05)
            if isinstance(app.screen, StoryScreen) and footer_hints(app):
                break
        return footer_hints(app)

    hints = run_app(DoctorApp(fixture_session(HEALTHY)), main_screen, size=size)
    assert {"⏎ Open", "jk Move", "q Quit", "? Help", "v Full", "/ Find", "p Probe", "r Run", "s/m Save", "c Copy"} <= set(hints), hints
    hints = run_app(DoctorApp(story_session()), story, size=size)
    assert {"tab Case", "hl Stage", "⏎ Open", "v Full", "jk More", "s/m Save", "c Copy", "q Quit", "? Help"} <= set(hints), hints
