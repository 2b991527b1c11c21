"""The TUI's one output sanitiser: every line Textual draws passes `ControlsDropped`, so a GPU name, a path or a
replayed report holding OSC 52 (the clipboard), a title change or a screen clear is drawn as plain text, never
obeyed. Controls are dropped rather than shown as ^[ so each line keeps the width Textual laid it out with (they
take no cell); the text renderers show them instead (doctor/render/untrusted.py).
"""

from __future__ import annotations

from typing import Sequence, TypeVar

from rich.segment import Segment
from textual.app import App
from textual.color import Color
from textual.filter import LineFilter

from doctor.render.untrusted import CONTROLS


class ControlsDropped(LineFilter):
    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        return [s if s.control or not CONTROLS.search(s.text) else Segment(CONTROLS.sub("", s.text), s.style)
                for s in segments]


CONTROLS_DROPPED = ControlsDropped()


def with_controls_dropped(filters: Sequence[LineFilter]) -> list[LineFilter]:
    """An app's line filters with ControlsDropped last (after colour filters, which keep the text)."""
    return [*filters, CONTROLS_DROPPED]


ReturnType = TypeVar("ReturnType")


class SanitisedApp(App[ReturnType]):
    """The doctor's apps (the checks' screen, the plan): names and paths from the machine or a report are drawn,
    not obeyed."""

    def get_line_filters(self) -> Sequence[LineFilter]:
        """Textual's filters, then the sanitiser."""
        return with_controls_dropped(super().get_line_filters())
