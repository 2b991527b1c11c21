"""The fit screen: the score on top, the ranked models in the table, Enter shows a row's commands."""

from __future__ import annotations

import asyncio


def test_the_screen_shows_a_rows_commands():
    from doctor.facts.catalogue import candidates, catalogue, model_config
    from doctor.facts.catalogue.licences import licence_of
    from doctor.knowledge.gpus import spec_for_key
    from doctor.plan.best import CatalogueReader, Filters, best_fit
    from doctor.tui.fit_screen import FitApp

    result = best_fit(catalogue().entries, (spec_for_key("v100-pcie-16gb"),), "--target-gpu", 8192, 3.5, None,
                      Filters(min_params=7), 5, "test", CatalogueReader(model_config, candidates, licence_of))

    async def main():
        app = FitApp(result)
        async with app.run_test(size=(200, 40)) as pilot:
            from textual.widgets import DataTable, Static

            assert app.query_one(DataTable).row_count == 5
            assert "score: quality floor first" in str(app.query_one("#score", Static).render())
            await pilot.press("enter")
            await pilot.pause()
            shown = str(app.query_one("#commands-text", Static).render())
            assert result.choices[0].model.repo in shown and "download:" in shown

    asyncio.run(main())
