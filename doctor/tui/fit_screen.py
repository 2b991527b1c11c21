"""`v100-doctor fit` on a terminal: the score on top, the ranked models of every card set in one table (plan's
columns after the model's), Enter shows a row's commands. Draws a FitResult only: it is made before the screen opens,
by the same code as the text output."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Footer, Static

from doctor.model.fit import FitChoice, FitResult
from doctor.render.fit_text import FIT_HEADERS, fit_cells
from doctor.tui.controls_dropped import SanitisedApp
from doctor.tui.plan_screen import PlanTable, commands_text


class FitApp(SanitisedApp[None]):
    TITLE = "v100-doctor fit"
    CSS = """
    #score { height: auto; max-height: 6; padding: 0 1; }
    DataTable { height: 1fr; min-height: 4; }
    #commands { height: auto; max-height: 45%; border-top: solid $accent; padding: 0 1; }
    """
    BINDINGS = [Binding("q", "quit", "Quit"), Binding("escape", "quit", "Quit", show=False)]

    def __init__(self, result: FitResult) -> None:
        super().__init__()
        self.result = result
        self.chosen: FitChoice | None = None

    def compose(self) -> ComposeResult:
        r = self.result
        yield Static(f"{' + '.join(r.cards)} at {r.context} tokens ({r.cards_from})\nscore: {r.score}", id="score")
        yield PlanTable(id="table", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="commands"):
            text = "Enter: this row's commands   q: quit" if r.choices else "Nothing in the catalogue fits."
            yield Static(text, id="commands-text")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns(*FIT_HEADERS)
        for i, c in enumerate(self.result.choices):
            table.add_row(*fit_cells(c), key=str(i))
        table.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.chosen = c = self.result.choices[int(str(event.row_key.value))]
        self.query_one("#commands-text", Static).update(f"#{c.rank} {c.model.repo}\n{commands_text(c.row)}")
