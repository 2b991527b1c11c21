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

# what `s` cycles through: (name, key, reverse, the column it orders, whose header then carries SORTED)
SORTS = (
    ("expected speed", lambda r: (not r.fits, -r.speed.mid), False, "tok/s (range)"),
    ("longest context", lambda r: -r.max_context, False, "max ctx"),
    ("peak memory", lambda r: max(r.peak_bytes), False, "peak / card GB"),
    ("download size", lambda r: r.option.download_bytes or 0, False, "download"),
    ("bits per weight", lambda r: -(r.option.bpw or 16), False, "version"),
)
SORTED = " ▼"  # beside the header of the column the rows are ordered by (best first)


def sorted_headers(names: tuple[str, ...], column: str) -> tuple[str, ...]:
    return tuple(n + SORTED if n == column else n for n in names)


def columns_hint(widths: list[int], scroll_x: float, view: int) -> str:
    """Which columns the table shows at this scroll and width, and how to see the others ("" when all fit)."""
    if sum(widths) <= view:
        return ""
    starts = [sum(widths[:i]) for i in range(len(widths))]
    shown = [i for i, (a, w) in enumerate(zip(starts, widths)) if a >= scroll_x - 0.5 and a + w <= scroll_x + view + 0.5]
    if not shown:
        return f"{len(widths)} columns, wider than the screen: ←/→ scroll, v shows the chosen row whole"
    first, last = shown[0] + 1, shown[-1] + 1
    left, right = first - 1, len(widths) - last
    more = " and ".join(p for p in (f"{left} to the left" if left else "", f"{right} to the right" if right else "") if p)
    return f"columns {first}-{last} of {len(widths)}; {more}: ←/→ scroll"


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
    #columns-hint { height: auto; padding: 0 1; color: $text-muted; text-wrap: nowrap; text-overflow: ellipsis; }
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
        yield Static("", id="columns-hint")
        with VerticalScroll(id="commands"):
            yield Static("Enter: this row's commands   s: sort   v: full text   q: quit", id="commands-text")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        self._fill()
        self.sub_title = f"sorted by {SORTS[self.sort_index][0]}"
        self.watch(table, "scroll_x", lambda _old, _new: self._say_columns())
        table.focus()

    def on_resize(self) -> None:
        self.call_after_refresh(self._say_columns)

    def _fill(self) -> None:
        table = self.query_one(DataTable)
        table.clear(columns=True)
        table.add_columns(*sorted_headers(headers(self.plan), SORTS[self.sort_index][3]))
        for i, r in enumerate(self.rows):
            table.add_row(*cells(r, has_draft(self.plan)), key=str(i))
        self.call_after_refresh(self._say_columns)

    def _say_columns(self) -> None:
        """The line under the table: the order, which columns show and that ←/→ bring the others."""
        table = self.query_one(DataTable)
        widths = [c.get_render_width(table) for c in table.ordered_columns]
        hint = columns_hint(widths, table.scroll_x, table.scrollable_content_region.width)
        name, _key, _reverse, column = SORTS[self.sort_index]
        # the order is said here too: the sorted column's own header may be scrolled out of sight
        self.query_one("#columns-hint", Static).update(f"sorted by {name} ({column}{SORTED})" + (f" · {hint}" if hint else ""))

    def action_sort(self) -> None:
        self.sort_index = (self.sort_index + 1) % len(SORTS)
        name, key, reverse, _column = SORTS[self.sort_index]
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
