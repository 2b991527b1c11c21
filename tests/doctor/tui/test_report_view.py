"""The report view (doctor/tui/report_view.py) on its own, in a bare app: the run's typed messages posted to it
are drawn as they come, a finished report at once, and the filter narrows the list."""

from __future__ import annotations

import asyncio

from conftest import MACHINES
from textual.app import App, ComposeResult
from tui_support import TORCH_211

from checks.manifest import ENV_CHECKS
from doctor.facts.replay import load_document
from doctor.model.events import CheckFinished, ChecksChosen, CheckStarted
from doctor.model.source import SavedFile
from doctor.run.pipeline import diagnose
from doctor.tui.banner import source_text
from doctor.tui.messages import CheckProgress, ChecksListed
from doctor.tui.report_view import ReportView


def torch_211_report():
    loaded = load_document(str(MACHINES / TORCH_211))
    return diagnose(loaded.plan, loaded.facts, checks=ENV_CHECKS)


class OneView(App[None]):
    CSS_PATH = "../../../doctor/tui/app.tcss"

    def __init__(self) -> None:
        super().__init__()
        self.view = ReportView(None, SavedFile(str(MACHINES / TORCH_211)), id="report-view")

    def compose(self) -> ComposeResult:
        yield self.view


def run(script):
    async def main():
        app = OneView()
        async with app.run_test(size=(100, 30)) as pilot:
            return await script(app.view, pilot)

    return asyncio.run(asyncio.wait_for(main(), 30))


def test_the_runs_messages_posted_to_the_view_are_drawn_as_they_come():
    report = torch_211_report()
    first = report.findings[0]

    async def script(view, pilot):
        view.post_message(ChecksListed(ChecksChosen(checks=tuple((f.id, f.title) for f in report.findings), gathering=False)))
        view.post_message(CheckProgress(CheckStarted(first.id, first.title)))
        view.post_message(CheckProgress(CheckFinished(first)))
        await pilot.pause()
        return view.checklist.check_ids, view.checklist.findings, view.banner.status, view.detail.finding

    ids, findings, status, shown = run(script)
    assert ids == [f.id for f in report.findings] and list(findings) == [first.id]
    assert status == f"running checks 1/{len(report.findings)}…" and shown == first  # the cursor is on it


def test_a_finished_report_is_drawn_at_once_and_the_filter_narrows_it():
    report = torch_211_report()

    async def script(view, pilot):
        view.show_saved(report)
        await pilot.pause()
        opened_on = view.checklist.highlighted_id
        view.open_filter()
        view.filter_input.value = "flash"
        await pilot.pause()
        return opened_on, view.banner.source, view.checklist.shown_ids

    opened_on, source, shown = run(script)
    assert opened_on == "cuda-pairing"  # the first failure
    assert source == source_text(report, report.source)  # the report's provenance, no longer the source asked for
    assert shown == ["flash-attn"]


def test_the_engine_in_force_is_shown_under_the_banner_and_in_the_full_text():
    """Issue 35: the TUI says which engine the checks judged and why, as the text report's "Judged as" line."""
    from doctor.render.common import engine_line

    loaded = load_document(str(MACHINES / "engine-hosts" / "v100-ollama-no-torch-healthy.json"))
    report = diagnose(loaded.plan, loaded.facts, checks=ENV_CHECKS)

    async def script(view, pilot):
        view.show_saved(report)
        await pilot.pause()
        engine = view.query_one("#engine")
        return str(engine.render()), engine.display, engine.region.height, view.full_text_parts()

    shown, displayed, height, parts = run(script)
    assert shown == engine_line(report) and shown.startswith("Judged as ollama: ")
    assert displayed and height == 1
    assert engine_line(report) in parts[0].plain.splitlines()  # `v` shows it whole


def test_the_engine_line_is_left_out_of_a_small_terminals_one_pane():
    report = torch_211_report()

    async def script(view, pilot):
        view.show_saved(report)
        view.layout_for(60, 15)
        await pilot.pause()
        return view.query_one("#engine").region.height, view.engine_text

    height, text = run(script)
    assert text.startswith("Judged as") and height == 0
