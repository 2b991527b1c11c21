"""The routes between the demo's story view and the main screen (doctor/tui/story_routes.py): `demo NAME` opens on
that stage's report with the story behind it at that stage; a story stage's report needs no run."""

from __future__ import annotations

from tui_support import fixture_session, run_app

from doctor.model.source import example
from doctor.run.session import story_session
from doctor.tui.app import DoctorApp
from doctor.tui.story_routes import stage_report


def test_a_demo_stage_opens_on_its_replayed_report_and_anything_else_on_none():
    stage = "seed-2-exl2-4.25bpw"
    session = story_session(stage)
    assert stage_report(session) is dict(session.story)[stage]
    assert stage_report(fixture_session("v100-pcie-16gb-healthy.json")) is None  # a replay runs its checks


def test_demo_name_opens_that_stage_and_t_goes_to_the_story():
    async def script(app, pilot):
        await pilot.pause()
        first = (type(app.screen).__name__, app.report.source)
        await pilot.press("t")
        await pilot.pause()
        return first, app.screen.selected.name

    first, selected = run_app(DoctorApp(story_session("seed-2-exl2-4.25bpw")), script)
    assert first == ("Screen", example("seed-2-exl2-4.25bpw")) and selected == "seed-2-exl2-4.25bpw"
