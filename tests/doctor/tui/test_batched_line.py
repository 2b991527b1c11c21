"""The batched-decode line under the speed verdict (doctor/tui/report_view.py): a replayed llama.cpp host shows its
model's speed by streams and the knee, `v` shows it whole, a host without a model shows none, and a small
terminal's one pane leaves it out. Driven with App.run_test() and Pilot."""

from __future__ import annotations

from conftest import MACHINES
from tui_support import fixture_session, run_app, settle, until

from doctor.facts.replay import load_document
from doctor.render.batched_text import one_line
from doctor.run.pipeline import diagnose
from doctor.tui.app import DoctorApp
from doctor.tui.full_text import FullTextScreen

LLAMA = "engines/v100-llamacpp-healthy.json"


def test_a_llama_cpp_host_shows_its_streams_and_knee_and_v_shows_them_whole():
    loaded = load_document(str(MACHINES / LLAMA))
    expected = one_line(diagnose(loaded.plan, loaded.facts))

    async def script(app, pilot):
        await settle(app, pilot)
        line = app.main_screen.query_one("#batched")
        shown = (str(line.render()), line.display, line.region.height)
        await pilot.press("v")
        await until(pilot, lambda: isinstance(app.screen, FullTextScreen))
        return shown, app.screen.text if isinstance(app.screen, FullTextScreen) else ""

    (text, displayed, height), full = run_app(DoctorApp(fixture_session(LLAMA, checks=None)), script, size=(120, 40))
    assert expected.startswith("Streams (estimate), tok/s in total/each: 1: ") and " · 2: " in expected
    assert "; knee: " in expected and expected.endswith("; GGUF Q4_K_M, llama.cpp")
    assert displayed and height == 1 and text.startswith(expected[:60])  # one line, the ladder first
    assert expected in " ".join(full.split())  # `v`: the line whole, however it wraps


def test_a_host_without_a_model_shows_no_batched_line():
    async def script(app, pilot):
        await settle(app, pilot)
        line = app.main_screen.query_one("#batched")
        return line.region.height, app.view.batched_text

    height, text = run_app(DoctorApp(fixture_session("v100-pcie-16gb-healthy.json", checks=None)), script, size=(120, 40))
    assert height == 0 and text == ""


def test_a_small_terminals_one_pane_leaves_it_out():
    async def script(app, pilot):
        await settle(app, pilot)
        await pilot.pause()
        return app.main_screen.query_one("#batched").region.height, app.view.batched_text

    height, text = run_app(DoctorApp(fixture_session(LLAMA, checks=None)), script, size=(60, 20))
    assert text.startswith("Streams (estimate)") and height == 0


def test_the_demos_story_stage_shows_its_streams_taking_turns():
    """`v100-doctor demo seed-4-exl2-3.75bpw`: the stage's report (its recorded probe, 64 tok/s) with its line."""
    from doctor.run.session import story_session

    async def script(app, pilot):
        await pilot.pause()
        await until(pilot, lambda: bool(app.view.batched_text))
        return app.view.batched_text, app.main_screen.query_one("#batched").region.height

    text, height = run_app(DoctorApp(story_session("seed-4-exl2-3.75bpw")), script, size=(120, 40))
    assert text.startswith("Streams (estimate), tok/s in total/each: 1: 64 · 2: 64/32 · 4: 64/16 · 8: 64/8; knee: one "
                           "stream at a time") and height == 1
