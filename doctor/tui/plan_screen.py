"""`v100-doctor plan` on a terminal: the answer on top, every option in a sortable table, Enter shows a row's
commands (download, TabbyAPI config.yml or llama-server). Draws a QuantPlan only: the plan is made before the
screen opens, by the same code as the text output."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Footer, Static

from doctor.model.quant_plan import PlanRow, QuantPlan
from doctor.render.plan_common import cells, has_draft, headers, ladder_text, sorted_rows
from doctor.tui.controls_dropped import SanitisedApp

# what `s` cycles through: (name, key, reverse)
SORTS = (
    ("expected speed", lambda r: (not r.fits, -r.speed.mid), False),
    ("longest context", lambda r: -r.max_context, False),
    ("peak memory", lambda r: max(r.peak_bytes), False),
    ("download size", lambda r: r.option.download_bytes or 0, False),
    ("bits per weight", lambda r: -(r.option.bpw or 16), False),
)


def commands_text(r: PlanRow) -> str:
    head = f"{r.option.label}, {r.cache} cache, {r.context} tokens on {' + '.join(r.cards)}"
    if not r.fits:
        head += f" (does not fit: {r.why_not})"
    body = [f"{kind}:\n" + "\n".join(f"  {line}" for line in text.splitlines()) for kind, text in r.commands.items()]
    ladder = [ladder_text(r)] if r.concurrency else []
    return "\n".join([head, *body, *ladder, f"speed: {r.speed.source}"])


class PlanTable(DataTable):
    """The options; enter shows the row's commands (said in the footer, which DataTable's own binding hides)."""

    BINDINGS = [Binding("enter", "select_cursor", "Commands", key_display="⏎"),
                Binding("j", "cursor_down", "Move", key_display="jk"), Binding("k", "cursor_up", "Up", show=False)]


class PlanApp(SanitisedApp[None]):
    """One screen: answers (a line each, cut with "…"; `v` shows them whole), table, the chosen row's commands."""

    TITLE = "v100-doctor plan"
    CSS = """
    #answers { height: auto; max-height: 8; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    DataTable { height: 1fr; min-height: 4; }
    #commands { height: auto; max-height: 45%; border-top: solid $accent; padding: 0 1; }
    """
    BINDINGS = [Binding("s", "sort", "Sort"), Binding("v", "full_text", "Full"), Binding("q", "quit", "Quit"),
                Binding("escape", "quit", "Quit", show=False)]

    def __init__(self, plan: QuantPlan) -> None:
        super().__init__()
        self.plan = plan
        self.sort_index = 0
        self.rows: list[PlanRow] = sorted_rows(plan)
        self.chosen: PlanRow | None = None  # the row whose commands are shown

    def compose(self) -> ComposeResult:
        answers = "\n".join(f"* {a.question}: {a.sentence}" for a in self.plan.answers)
        yield Static(f"{self.plan.model} ({self.plan.shape})\n{answers}", id="answers")
        yield PlanTable(id="table", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="commands"):
            yield Static("Enter: this row's commands   s: sort   v: full text   q: quit", id="commands-text")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns(*headers(self.plan))
        self._fill()
        table.focus()

    def _fill(self) -> None:
        table = self.query_one(DataTable)
        table.clear()
        for i, r in enumerate(self.rows):
            table.add_row(*cells(r, has_draft(self.plan)), key=str(i))

    def action_sort(self) -> None:
        self.sort_index = (self.sort_index + 1) % len(SORTS)
        name, key, reverse = SORTS[self.sort_index]
        self.rows = sorted(self.plan.rows, key=key, reverse=reverse)
        self._fill()
        self.sub_title = f"sorted by {name}"

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.chosen = row = self.rows[int(str(event.row_key.value))]
        self.query_one("#commands-text", Static).update(commands_text(row))

    def action_full_text(self) -> None:
        """v: the answers and the chosen row's commands, whole."""
        from doctor.tui.full_text import FullTextScreen, section  # lazy: loads when first asked for

        parts = [section(f"{self.plan.model} ({self.plan.shape})", *(f"* {a.question}: {a.sentence}" for a in self.plan.answers))]
        if self.chosen is not None:
            parts.append(section("Commands", commands_text(self.chosen)))
        self.push_screen(FullTextScreen("Full text (escape closes)", parts))
