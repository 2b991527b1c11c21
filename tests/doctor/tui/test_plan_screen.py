"""The plan screen: the answer on top, every row in the table, `s` sorts, Enter shows the row's commands."""

from __future__ import annotations

import asyncio
import json

from conftest import ROOT

from doctor.facts.modeldir.config import parse_config
from doctor.knowledge.gpus import spec_for_key
from doctor.plan.build import build_plan, standard_candidates
from doctor.tui.plan_screen import SORTS, PlanApp


def make_plan():
    config = parse_config(json.loads((ROOT / "fixtures/models/qwen2-27b-exl2-3.75bpw/config.json").read_text()))
    return build_plan("story", "test", config, standard_candidates(), (spec_for_key("v100-pcie-16gb"),), 8192)


def test_sort_and_enter_show_the_commands():
    plan = make_plan()

    async def main():
        app = PlanApp(plan)
        async with app.run_test(size=(160, 48)) as pilot:
            from textual.widgets import DataTable, Static

            table = app.query_one(DataTable)
            assert table.row_count == len(plan.rows)
            answers = str(app.query_one("#answers", Static).render())
            assert "fastest at 8192" in answers
            first = app.rows[0]
            assert first.fits and first.speed.mid == max(r.speed.mid for r in plan.rows if r.fits)
            await pilot.press("s")
            assert app.sub_title == f"sorted by {SORTS[1][0]}" and app.rows[0].max_context == max(r.max_context for r in plan.rows)
            await pilot.press("enter")
            await pilot.pause()
            shown = str(app.query_one("#commands-text", Static).render())
            assert app.rows[0].option.label in shown and "download:" in shown
            await pilot.press("q")

    asyncio.run(main())


def test_the_knee_is_a_column_and_enter_shows_every_stream_count():
    """Issue 38: the table's knee column, and a row's batched-decode line under its commands."""
    plan = make_plan()

    async def main():
        app = PlanApp(plan)
        async with app.run_test(size=(200, 48)) as pilot:
            from textual.widgets import DataTable, Static

            table = app.query_one(DataTable)
            labels = [str(c.label) for c in table.columns.values()]
            assert "knee" in labels
            row = app.rows[0]
            assert row.concurrency and str(table.get_row_at(0)[labels.index("knee")]) in ("1 (in turn)",) + tuple(
                f"{c.streams}: {c.total_tok_s.mid:g}" for c in row.concurrency) + tuple(
                f"{c.streams}: {c.total_tok_s.mid:g}+" for c in row.concurrency)
            await pilot.press("enter")
            await pilot.pause()
            shown = str(app.query_one("#commands-text", Static).render())
            assert "streams x context: total tok/s" in shown and f"1 x {row.context}" in shown

    asyncio.run(main())
