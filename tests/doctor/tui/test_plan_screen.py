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


def test_at_60_by_15_the_table_says_which_columns_show_and_which_it_is_sorted_by():
    """Issue 39: at 60x15 the table hid its columns with no hint that more exist, and no column showed the order."""
    from tui_support import until

    from doctor.tui.plan_screen import SORTED

    plan = make_plan()

    def hint(app) -> str:
        return str(app.query_one("#columns-hint").render())

    def sorted_columns(app) -> list[str]:
        from textual.widgets import DataTable

        return [str(c.label) for c in app.query_one(DataTable).ordered_columns if str(c.label).endswith(SORTED)]

    async def main():
        app = PlanApp(plan)
        async with app.run_test(size=(60, 15)) as pilot:
            from textual.widgets import DataTable

            await until(pilot, lambda: "to the right" in hint(app))
            first = hint(app), sorted_columns(app)
            table = app.query_one(DataTable)
            for _ in range(40):
                await pilot.press("right")
            await until(pilot, lambda: "to the left" in hint(app))
            scrolled = hint(app), table.scroll_x
            await pilot.press("s")
            await until(pilot, lambda: "longest context" in hint(app))
            return first, scrolled, hint(app), sorted_columns(app)

    (first, first_sorted), (scrolled, scroll_x), after_s, after_sorted = asyncio.run(main())
    assert first.startswith(f"sorted by expected speed (tok/s (range){SORTED}) · columns 1-")
    assert "of 14" in first and "to the right: ←/→ scroll" in first and first_sorted == [f"tok/s (range){SORTED}"]
    assert scroll_x > 0 and "to the left" in scrolled
    assert after_s.startswith(f"sorted by longest context (max ctx{SORTED})") and after_sorted == [f"max ctx{SORTED}"]


def test_columns_hint_names_what_is_hidden_on_each_side():
    from doctor.tui.plan_screen import columns_hint

    assert columns_hint([10, 10, 10], 0, 40) == ""
    assert columns_hint([10, 10, 10, 10], 0, 25) == "columns 1-2 of 4; 2 to the right: ←/→ scroll"
    assert columns_hint([10, 10, 10, 10], 10, 25) == "columns 2-3 of 4; 1 to the left and 1 to the right: ←/→ scroll"
    assert columns_hint([10, 10, 10, 10], 20, 25) == "columns 3-4 of 4; 2 to the left: ←/→ scroll"
