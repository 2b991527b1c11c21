"""The ordered checklist: one line per check with its live state (spinner, then ✓ ! ✗ – ☠).

Colours come from component classes styled in app.tcss; the glyphs alone carry the meaning,
so the list reads the same under NO_COLOR or on a monochrome terminal.
"""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from doctor.model.findings import Finding, Status

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
PENDING = "·"


class Checklist(OptionList):
    """Check ids in run order; `mark_running` / `mark_finished` follow the engine's events."""

    BINDINGS = [
        Binding("j", "cursor_down", "Move", key_display="↑↓jk"),
        Binding("k", "cursor_up", "Up", show=False),
        Binding("enter", "select", "Details", key_display="⏎"),
    ]
    COMPONENT_CLASSES = {
        "checklist--pending", "checklist--running", "checklist--pass", "checklist--warn", "checklist--fail",
        "checklist--skip", "checklist--error", "checklist--info", "checklist--reason",
    }

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.findings: dict[str, Finding] = {}
        self._busy: set[str] = set()
        self._check_titles: dict[str, str] = {}
        self._spin_frame = 0

    def on_mount(self) -> None:
        self.set_interval(0.1, self._spin)

    def reset(self, checks: list[tuple[str, str]]) -> None:
        """Start over with (id, title) pairs, every line pending."""
        self.findings.clear()
        self._busy.clear()
        self._check_titles = dict(checks)
        self.clear_options()
        self.add_options([Option(self._prompt(cid), id=cid) for cid, _ in checks])
        if checks:
            self.highlighted = 0

    def show_findings(self, findings: list[Finding] | tuple[Finding, ...]) -> None:
        """Draw finished findings at once (a replayed report)."""
        self.reset([(f.id, f.title) for f in findings])
        for f in findings:
            self.mark_finished(f)

    def mark_running(self, check_id: str) -> None:
        self._busy.add(check_id)
        self._redraw(check_id)

    def mark_finished(self, finding: Finding) -> None:
        self._busy.discard(finding.id)
        self.findings[finding.id] = finding
        if finding.id not in self._check_titles:  # a finding for a check the list did not announce
            self._check_titles[finding.id] = finding.title
            self.add_option(Option(self._prompt(finding.id), id=finding.id))
        self._redraw(finding.id)

    def is_running(self, check_id: str) -> bool:
        return check_id in self._busy

    def stop_running(self) -> None:
        """The run broke off: lines still spinning go back to pending."""
        busy, self._busy = self._busy, set()
        for check_id in busy:
            self._redraw(check_id)

    @property
    def highlighted_id(self) -> str | None:
        if self.highlighted is None or not self.option_count:
            return None
        return self.get_option_at_index(self.highlighted).id

    def symbol_of(self, check_id: str) -> str:
        """The glyph a line shows now; tests and the detail header read it from here."""
        if check_id in self.findings:
            from doctor.render.common import SYMBOLS  # after the first frame: it loads the report model

            return SYMBOLS[self.findings[check_id].status]
        if check_id in self._busy:
            return SPINNER[self._spin_frame % len(SPINNER)]
        return PENDING

    def _state(self, check_id: str) -> str:
        if check_id in self.findings:
            return self.findings[check_id].status.value
        return "running" if check_id in self._busy else "pending"

    def _prompt(self, check_id: str) -> Text:
        style = self.get_component_rich_style(f"checklist--{self._state(check_id)}", partial=True)
        line = Text.assemble((self.symbol_of(check_id), style), " ", check_id, no_wrap=True, overflow="ellipsis")
        finding = self.findings.get(check_id)
        if finding is not None and finding.status is Status.SKIP:
            line.append("\n  " + _fit(_skip_reason(finding), self.scrollable_content_region.width - 2),
                        self.get_component_rich_style("checklist--reason", partial=True))
        return line

    def on_resize(self) -> None:
        for check_id in self.findings:
            self._redraw(check_id)

    def _redraw(self, check_id: str) -> None:
        if check_id in self._check_titles:
            self.replace_option_prompt(check_id, self._prompt(check_id))

    def _spin(self) -> None:
        if self._busy:
            self._spin_frame += 1
            for cid in list(self._busy):
                self._redraw(cid)


def _skip_reason(finding: Finding) -> str:
    needs = finding.evidence.get("needs")
    return f"needs {needs}" if needs else finding.summary.removeprefix("skipped: ")


def _fit(text: str, width: int) -> str:
    """One line, cut with an ellipsis: a wrapped reason would read as another check."""
    width = max(width, 4)
    return text if len(text) <= width else text[: width - 1] + "…"
