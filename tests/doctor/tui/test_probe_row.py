"""The probe row (doctor/tui/probe_row.py) on its own: typed ProbeUpdate messages posted to it are drawn, a probe
stage that raised is said in its panel, and a finished report's probe and verdict replace what was seen live."""

from __future__ import annotations

import asyncio

from probe_wire import EVENTS
from textual.app import App, ComposeResult

from doctor.tui.messages import ProbeEnded, ProbeUpdate
from doctor.tui.probe_panel import ProbePanel
from doctor.tui.probe_row import ProbeRow
from doctor.tui.verdict_panel import VerdictPanel


class OneRow(App[None]):
    CSS = "ProbeRow { height: auto; } ProbeRow.-shown { display: block; }"

    def compose(self) -> ComposeResult:
        yield ProbeRow(id="probe-row")


def posted(*messages: object) -> tuple[ProbeRow, str, list[float], bool]:
    async def main() -> tuple[ProbeRow, str, list[float], bool]:
        app = OneRow()
        async with app.run_test(size=(100, 20)) as pilot:
            row = app.query_one(ProbeRow)
            row.start()
            for message in messages:
                row.post_message(message)  # as the probe's worker posts them, from its thread
            await pilot.pause()
            panel = row.query_one(ProbePanel)
            return row, str(panel.query_one("#probe-phase").render()), panel.query_one("#probe-spark").data, \
                row.query_one(VerdictPanel).display

    return asyncio.run(asyncio.wait_for(main(), 30))


def test_typed_probe_events_posted_to_the_row_are_drawn():
    row, phase, spark, verdict_shown = posted(*(ProbeUpdate(e) for e in EVENTS))
    assert row.shown and row.state.state == "running" and row.state.done == 128 and row.state.total == 384
    assert phase.startswith("decode runs: timed decode") and spark == [30.5, 58.0, 63.8]
    assert row.verdict is None and verdict_shown  # "no verdict yet" until the probe ends


def test_a_probe_stage_that_raised_is_said_in_the_panel():
    row, phase, _, _ = posted(ProbeUpdate(EVENTS[0]), ProbeEnded(None, RuntimeError("boom")))
    assert row.state.state == "failed" and phase == "failed: RuntimeError: boom"


def test_a_finished_report_keeps_the_live_readings_and_shows_the_verdict():
    from tui_support import recorded_probe

    from doctor.run.probe_stage import with_probe
    from doctor.run.session import story_session

    stage = "seed-2-exl2-4.25bpw"
    report = with_probe(dict(story_session(stage).story)[stage], recorded_probe("v100-throttled"))

    async def main() -> ProbeRow:
        app = OneRow()
        async with app.run_test(size=(100, 20)) as pilot:
            row = app.query_one(ProbeRow)
            row.start()
            for event in EVENTS:
                row.feed(event)
            row.finish(report)
            await pilot.pause()
            return row

    row = asyncio.run(asyncio.wait_for(main(), 30))
    assert row.state.state == "done" and row.state.temperature_c == 64  # the last live reading kept
    assert row.verdict is not None and row.verdict.measured_tok_s > 0
