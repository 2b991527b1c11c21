"""Issue 13: the story view of `v100-doctor demo`: the V100's four stages side by side, the H200 one more tab;
every figure is the replayed example's own (its recorded probe, today's verdict)."""

from __future__ import annotations

import pytest
from tui_support import run_app, until

from doctor.model.source import example
from doctor.render.panels import story_cases
from doctor.run.session import story_session
from doctor.tui.app import DoctorApp
from doctor.tui.story import StageCard, StoryScreen  # one stage at a time below 80 columns: the 60x15 snapshot


@pytest.fixture(scope="module")
def session():
    return story_session()


def test_the_cases_are_the_v100_journey_then_the_h200_with_the_reports_own_numbers(session):
    cases = story_cases(list(session.story))
    v100, h200 = cases
    assert [s.name for s in v100.stages] == ["seed-1-transformers-bnb", "seed-2-exl2-4.25bpw", "seed-3-q8-cache-8192",
                                             "seed-4-exl2-3.75bpw"]
    reports = dict(session.story)
    for stage in v100.stages + h200.stages:
        verdict = reports[stage.name].verdict
        assert (stage.measured_tok_s, stage.ceiling_tok_s) == (verdict.measured_tok_s, verdict.ceiling_tok_s)
    assert [round(s.measured_tok_s) for s in v100.stages] == [4, 25, 40, 64]
    assert "kernel path" in v100.stages[0].cause and "CPU offload" in v100.stages[1].cause
    assert "ExLlamaV2" in v100.stages[0].fix and "VRAM" in v100.stages[1].fix and "3.75 bpw" in v100.stages[2].fix
    assert v100.stages[3].fix.startswith("at the card's limit")
    assert "V100" in v100.label and "4 → 25 → 40 → 64" in v100.label and "H200" in h200.label


def test_keys_move_between_stages_and_cases_and_enter_opens_a_stage_escape_comes_back(session):
    async def script(app, pilot):
        await until(pilot, lambda: isinstance(app.screen, StoryScreen) and app.screen.query(StageCard))
        story = app.screen
        start = (isinstance(story, StoryScreen), story.selected.name, len(story.query(StageCard)))
        await pilot.press("right", "l")
        moved = story.selected.name
        await pilot.press("enter")
        await pilot.pause()
        opened = (type(app.screen).__name__, app.report.source, app.checklist.highlighted_id, app.banner.source)
        await pilot.press("escape")
        await pilot.pause()
        back = (isinstance(app.screen, StoryScreen), app.screen.selected.name)
        await pilot.press("tab")
        await pilot.pause()
        h200 = (app.screen.selected.name, len(app.screen.query(StageCard)))
        await pilot.press("h")  # wraps within the case
        return start, moved, opened, back, h200

    start, moved, opened, back, h200 = run_app(DoctorApp(session), script)
    assert start == (True, "seed-1-transformers-bnb", 4)
    assert moved == "seed-3-q8-cache-8192"
    assert opened[:3] == ("Screen", example("seed-3-q8-cache-8192"), "decode-speed")  # opened on its warning
    assert "RECORDED" in opened[3]
    assert back == (True, "seed-3-q8-cache-8192")
    assert h200 == ("h200-synthetic-gptq", 1)


def test_the_story_headline_is_cut_with_an_ellipsis_at_four_lines():
    from doctor.tui.story import at_most

    text = "100% of the gap to the ceiling is the kernel path of bnb-nf4-transformers in transformers+bitsandbytes " * 3
    cut = at_most(text, 40, 4).splitlines()
    assert len(cut) == 4 and cut[-1].endswith("…") and all(len(line) <= 40 for line in cut)
    assert at_most("short enough", 40, 4) == "short enough"


def test_at_60_by_15_the_storys_key_line_is_whole_and_help_lists_the_rest():
    """Issue 39: at 60x15 the story's footer was cut ("c Co", no quit). Below 80 columns a key line that fits takes its
    place, as on the main screen; `?` lists every key of the story (v, s/m, c) in its help."""
    from textual.widgets import Footer, Static
    from tui_support import run_app, until

    from doctor.tui.app import DoctorApp
    from doctor.tui.help_screen import HelpScreen
    from doctor.tui.story import COMPACT_KEYS

    async def script(app, pilot):
        def drawn() -> bool:
            found = list(app.screen.query("#story-keys")) if isinstance(app.screen, StoryScreen) else []
            return bool(found) and found[0].region.width > 0

        await until(pilot, drawn, timeout_s=30)
        story = app.screen
        keys = story.query_one("#story-keys", Static)
        shown = (keys.region, str(keys.render()), story.query_one(Footer).display)
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        return shown, app.screen.story

    from doctor.tui.keys import STORY_KEYS

    (region, text, footer_shown), story_help = run_app(DoctorApp(story_session()), script, size=(60, 15))
    assert region.y == 14 and region.right <= 60 and len(COMPACT_KEYS) + 2 <= 60
    assert text == COMPACT_KEYS and "? keys" in text and "q quit" in text and not footer_shown
    assert story_help and {"v", "s", "m", "c"} <= {k for k, _ in STORY_KEYS}  # the keys the line leaves to `?`
