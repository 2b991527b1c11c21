"""The detail pane: what one finding says, the numbers behind it, and the fix with its commands.

Commands sit in their own block so they can be selected with the mouse or copied with `c`
(OSC 52, which also reaches the local clipboard over SSH in terminals that allow it).
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from doctor.model.findings import Finding
from doctor.render.untrusted import visible


class DetailPane(VerticalScroll):
    """Shows the highlighted check; `show(None, ...)` explains what is still to come."""

    can_focus = True
    ALLOW_MAXIMIZE = True
    BINDINGS = [Binding("escape", "app.back", "Back", key_display="Esc")]  # full-screen or not: back to the list
    COMPONENT_CLASSES = {"detail--key"}

    def compose(self) -> ComposeResult:
        yield Static(id="detail-head")
        yield Static(id="detail-summary")
        yield Static(id="detail-fix")
        yield Static(id="detail-commands")
        yield Static(id="detail-evidence")

    def show(self, finding: Finding | None, placeholder: str = "") -> None:
        self.finding = finding
        head, summary, evidence, fix, commands = (self.query_one(f"#detail-{n}", Static) for n in
                                                  ("head", "summary", "evidence", "fix", "commands"))
        if finding is None:
            head.update(Text(placeholder))
            head.set_classes("")
            for part in (summary, evidence, fix, commands):
                part.update("")
                part.display = False
            return
        from doctor.render.common import SYMBOLS, evidence_items  # lazy: after the first frame: it loads the report model

        head.update(Text(f"{SYMBOLS[finding.status]} {finding.status.value.upper()}  {finding.title}  ({finding.id})"))
        head.set_classes(f"-{finding.status.value}")
        summary.update(Text(visible(finding.summary)))
        summary.display = True
        items = [(k, visible(v)) for k, v in evidence_items(finding.evidence)]
        evidence.display = bool(items)
        evidence.update(self._evidence_table(items) if items else "")
        fix.display = bool(finding.fix)
        fix.update(Text(f"Fix: {finding.fix}") if finding.fix else "")
        commands.display = bool(finding.commands)
        commands.update(Text("\n".join(c if c.startswith("#") else f"$ {c}" for c in finding.commands)))
        self.scroll_home(animate=False)

    @property
    def commands_text(self) -> str:
        finding = getattr(self, "finding", None)
        return "\n".join(finding.commands) if finding is not None else ""


    def _evidence_table(self, items: list[tuple[str, str]]) -> Table:
        table = Table(show_header=False, box=None, padding=(0, 1), expand=False)
        table.add_column(style=self.get_component_rich_style("detail--key", partial=True), no_wrap=True)
        table.add_column(overflow="fold")
        for key, value in items:
            table.add_row(key, value)
        return table
