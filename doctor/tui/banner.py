"""The three lines on top: whose machine this is (live, replayed, recorded example), what it has, and
where the run stands."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from doctor import __version__


class Banner(Static):
    """`source` says what is shown, `machine` what it has; `status` what is happening now or how it ended."""

    def __init__(self, source: str, **kw) -> None:
        super().__init__(**kw)
        self.source = source
        self.machine = ""
        self.status = ""
        self.compact = False  # two lines on a small terminal: what is shown and where the run stands

    def on_mount(self) -> None:
        self._paint()

    def set_source(self, source: str, machine: str = "") -> None:
        self.source, self.machine = source, machine
        self._paint()

    def set_status(self, status: str) -> None:
        self.status = status
        self._paint()

    def set_compact(self, compact: bool) -> None:
        self.compact = compact
        self._paint()

    @property
    def lines(self) -> list[str]:
        """Its three lines, uncut (the full-text view, `v`, shows them whole)."""
        return [f"v100-doctor {__version__} · {self.source}", self.machine, self.status]

    def _paint(self) -> None:
        top, machine, status = self.lines
        self.update(Text("\n".join([top, status] if self.compact else [top, machine, status])))
