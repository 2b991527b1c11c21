"""The ordered checklist: one line per check with its live state (spinner, then ✓ ! ✗ – ☠).

Colours come from component classes styled in app.tcss; the glyphs alone carry the meaning,
so the list reads the same under NO_COLOR or on a monochrome terminal. The cursor row drops the
state colour and takes the cursor's own (reverse-video) colours, so its glyph never sits dark on dark.
"""

from __future__ import annotations

import textwrap
from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.widgets import OptionList
from textual.widgets.option_list import Option, OptionDoesNotExist

from doctor.model.findings import Finding, Status

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
PENDING = "·"
PROBLEMS = (Status.FAIL, Status.ERROR)  # what the list opens on; else the first warning
REASON_LINES = 2  # a skip reason wraps onto at most this many indented lines


class Checklist(OptionList):
    """Check ids in run order; `mark_running` / `mark_finished` follow the engine's events; `set_filter` narrows it."""

    BINDINGS = [
        Binding("j", "cursor_down", "Move", key_display="jk"),
        Binding("k", "cursor_up", "Up", show=False),
        Binding("enter", "select", "Open", key_display="⏎"),
    ]
    COMPONENT_CLASSES = {
        "checklist--pending", "checklist--running", "checklist--pass", "checklist--warn", "checklist--fail",
        "checklist--skip", "checklist--error", "checklist--info", "checklist--reason",
    }

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.findings: dict[str, Finding] = {}
        self._busy: set[str] = set()
        self._check_titles: dict[str, str] = {}
        self._shown: list[str] = []  # the ids on screen now: all of them, or those the filter keeps
        self.filter_text = ""
        self._spin_frame = 0

    def on_mount(self) -> None:
        self.set_interval(0.1, self._spin)

    def reset(self, checks: list[tuple[str, str]]) -> None:
        """Start over with (id, title) pairs, every line pending."""
        self.findings.clear()
        self._busy.clear()
        self._check_titles = dict(checks)
        self._rebuild()

    def show_findings(self, findings: list[Finding] | tuple[Finding, ...]) -> None:
        """Draw finished findings at once (a replayed report), the cursor on the first problem."""
        self.reset([(f.id, f.title) for f in findings])
        for f in findings:
            self.mark_finished(f)
        self.go_to_first_problem()

    def first_problem(self) -> str | None:
        """The first failed (or crashed) check shown, else the first warning; None when all is well."""
        for wanted in (PROBLEMS, (Status.WARN,)):
            for cid in self._shown:
                finding = self.findings.get(cid)
                if finding is not None and finding.status in wanted:
                    return cid
        return None

    def go_to_first_problem(self) -> None:
        problem = self.first_problem()
        if problem is not None:
            self.go_to(problem)

    def go_to(self, check_id: str) -> bool:
        """Put the cursor on a check (clearing a filter that hides it); False when there is no such check."""
        if check_id not in self._check_titles:
            return False
        if check_id not in self._shown:
            self.set_filter("")
        self.highlighted = self._shown.index(check_id)
        return True

    def set_filter(self, text: str) -> None:
        """Keep only the checks whose id or title contains `text` (case-insensitive); "" shows them all."""
        current = self.highlighted_id
        self.filter_text = text.strip()
        self._rebuild(keep=current)

    @property
    def check_ids(self) -> list[str]:
        return list(self._check_titles)

    @property
    def shown_ids(self) -> list[str]:
        return list(self._shown)

    def title_of(self, check_id: str) -> str:
        return self._check_titles.get(check_id, check_id)

    def mark_running(self, check_id: str) -> None:
        self._busy.add(check_id)
        self._redraw(check_id)

    def mark_finished(self, finding: Finding) -> None:
        self._busy.discard(finding.id)
        self.findings[finding.id] = finding
        if finding.id not in self._check_titles:  # a finding for a check the list did not announce
            self._check_titles[finding.id] = finding.title
            if self._matches(finding.id):
                self._shown.append(finding.id)
                self.add_option(Option(self._prompt(finding.id), id=finding.id))
        self._redraw(finding.id)

    def is_checking(self, check_id: str) -> bool:
        """The check is running now (its line spins)."""
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
            from doctor.render.common import SYMBOLS  # lazy: after the first frame: it loads the report model

            return SYMBOLS[self.findings[check_id].status]
        if check_id in self._busy:
            return SPINNER[self._spin_frame % len(SPINNER)]
        return PENDING

    def watch_highlighted(self, old: int | None, new: int | None) -> None:  # type: ignore[override]  # textual's (old, new) watcher form
        super().watch_highlighted(new)
        for index in {i for i in (old, new) if i is not None}:  # the cursor row in the cursor's colours, the old in its own
            if index < len(self._shown):
                self._redraw(self._shown[index])

    def _matches(self, check_id: str) -> bool:
        needle = self.filter_text.lower()
        return not needle or needle in check_id.lower() or needle in self._check_titles.get(check_id, "").lower()

    def _rebuild(self, keep: str | None = None) -> None:
        self._shown = [cid for cid in self._check_titles if self._matches(cid)]
        self.clear_options()
        self.add_options([Option(self._prompt(cid), id=cid) for cid in self._shown])
        if self._shown:
            self.highlighted = self._shown.index(keep) if keep in self._shown else 0

    def _state(self, check_id: str) -> str:
        if check_id in self.findings:
            return self.findings[check_id].status.value
        return "running" if check_id in self._busy else "pending"

    def _is_cursor(self, check_id: str) -> bool:
        return self.highlighted is not None and self.highlighted < len(self._shown) and \
            self._shown[self.highlighted] == check_id

    def _prompt(self, check_id: str) -> Text:
        cursor = self._is_cursor(check_id)
        style = "" if cursor else self.get_component_rich_style(f"checklist--{self._state(check_id)}", partial=True)
        line = Text.assemble((self.symbol_of(check_id), style), " ", check_id, no_wrap=True, overflow="ellipsis")
        finding = self.findings.get(check_id)
        if finding is not None and finding.status is Status.SKIP:
            reason = "" if cursor else self.get_component_rich_style("checklist--reason", partial=True)
            for part in _wrapped(_skip_reason(finding), self.scrollable_content_region.width - 2):
                line.append("\n  " + part, reason)
        return line

    def on_resize(self) -> None:
        for check_id in self.findings:
            self._redraw(check_id)

    def _redraw(self, check_id: str) -> None:
        if check_id in self._shown:
            try:
                self.replace_option_prompt(check_id, self._prompt(check_id))
            except OptionDoesNotExist:  # between clearing the options and adding them again
                pass

    def _spin(self) -> None:
        if self._busy:
            self._spin_frame += 1
            for cid in list(self._busy):
                self._redraw(cid)


def _skip_reason(finding: Finding) -> str:
    needs = finding.evidence.get("needs")
    return f"needs {needs}" if needs else finding.summary.removeprefix("skipped: ")


def _wrapped(text: str, width: int) -> list[str]:
    """At most REASON_LINES indented lines, the last cut with an ellipsis; the whole reason is in the details.
    Words are never cut mid-way unless one alone is wider than the list."""
    width = max(width, 8)
    lines = textwrap.wrap(text, width, break_on_hyphens=False) or [""]
    if len(lines) > REASON_LINES:
        last = lines[REASON_LINES - 1]
        lines = lines[:REASON_LINES - 1] + [(last if len(last) < width else last[: width - 1]) + "…"]
    return lines
