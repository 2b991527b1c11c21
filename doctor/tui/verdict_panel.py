"""The verdict drawn: measured tok/s against the ceiling (and 64 tok/s on V100-class cards) as bars,
then each cause of the gap as a labelled bar, with "fix first" on top.

It draws a VerdictView; the numbers and the ranking are the verdict's, never computed here.
"""

from __future__ import annotations

import textwrap

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.widget import Widget

from doctor.render.panels import VerdictView

FULL, EMPTY = "█", "░"


def bar(fraction: float, width: int) -> str:
    width = max(width, 1)
    filled = round(max(0.0, min(fraction, 1.0)) * width)
    return FULL * filled + EMPTY * (width - filled)


class VerdictPanel(Widget):
    """Empty until `show(view)`; redraws its bars to the width it has."""

    COMPONENT_CLASSES = {"verdict--fix", "verdict--bar", "verdict--cause", "verdict--dim"}

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.view: VerdictView | None = None

    def on_mount(self) -> None:
        self.border_title = "Verdict"
        self.border_subtitle = "cause bars: share of the gap"

    def show(self, view: VerdictView | None) -> None:
        self.view = view
        self.refresh(layout=True)

    def render(self):
        view = self.view
        if view is None:
            return Text("no verdict yet: it needs a finished probe", style=self._style("dim"))
        width = max(self.content_size.width, 20)
        label_w = min(max([len(c.label) for c in view.causes] + [16]), 22)
        bar_w = max(width - label_w - 7, 4)
        rows = Table.grid(padding=(0, 1))
        rows.add_column(no_wrap=True, width=label_w)
        rows.add_column(no_wrap=True)
        rows.add_column(no_wrap=True, justify="right")
        speed = view.measured_tok_s / view.ceiling_tok_s if view.ceiling_tok_s else 0.0
        rows.add_row(f"of ceiling {view.ceiling_tok_s:.1f}", Text(bar(speed, bar_w), self._style("bar")), f"{speed:.0%}")
        if view.reference_tok_s:
            ref = view.measured_tok_s / view.reference_tok_s
            rows.add_row(view.reference_label or f"of {view.reference_tok_s:g}", Text(bar(ref, bar_w), self._style("bar")),
                         f"{ref:.0%}")
        for cause in view.causes:
            share = "n/a" if cause.share is None else f"{cause.share:.0%}"
            rows.add_row(Text(cause.label, overflow="ellipsis"), Text(bar(cause.share or 0.0, bar_w), self._style("cause")),
                         share)
        parts = [Text(_two_lines(f"Fix first: {view.fix_first}", width), style=self._style("fix"))] if view.fix_first else []
        if not view.fix_first and view.limit_options:
            parts = [Text(_two_lines(f"At the card's limit; options: {view.limit_options}", width), style=self._style("fix"))]
        head = Text(f"{view.measured_tok_s:.1f} tok/s measured", no_wrap=True, overflow="ellipsis")
        return Group(*parts, head, rows)  # the headline sentence is the decode-speed finding's summary

    def _style(self, name: str):
        return self.get_component_rich_style(f"verdict--{name}", partial=True)


def _two_lines(text: str, width: int) -> str:
    """At most two lines, so the bars stay in sight on 80x24; the whole fix is in the decode-speed detail."""
    lines = textwrap.wrap(text, width)
    if len(lines) <= 2:
        return "\n".join(lines)
    return lines[0] + "\n" + lines[1][: width - 1].rstrip() + "…"
