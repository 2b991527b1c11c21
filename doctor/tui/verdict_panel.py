"""The verdict drawn: measured tok/s against the ceiling (and 64 tok/s on V100-class cards) as bars,
then each cause of the gap as a labelled bar, with "fix first" on top.

It draws a VerdictView; the numbers and the ranking are the verdict's, never computed here.
"""

from __future__ import annotations

import textwrap
from typing import Any

from rich.console import Group, RenderableType
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.widget import Widget

from doctor.render.panels import VerdictView

FULL, EMPTY = "█", "░"
MIN_BAR = 6  # narrower than this, a bar says nothing: the panel shows the numbers alone


def bar(fraction: float, width: int) -> str:
    width = max(width, 1)
    filled = round(max(0.0, min(fraction, 1.0)) * width)
    return FULL * filled + EMPTY * (width - filled)


class VerdictPanel(Widget):
    """Empty until `show(view)`; redraws its bars to the width it has."""

    COMPONENT_CLASSES = {"verdict--fix", "verdict--bar", "verdict--cause", "verdict--dim"}

    def __init__(self, whole: bool = False, **kw: Any) -> None:
        super().__init__(**kw)
        self.view: VerdictView | None = None
        self.whole = whole  # the full-text view (`v`): the advice uncut

    def on_mount(self) -> None:
        self.border_title = "Verdict"
        self.border_subtitle = "cause bars: share of the gap"

    def show(self, view: VerdictView | None) -> None:
        self.view = view
        self.refresh(layout=True)

    def render(self) -> RenderableType:
        view = self.view
        if view is None:
            return Text("no verdict yet: it needs a finished probe", style=self._style("dim"))
        width = max(self.content_size.width, 1)  # the width it really has: a narrower guess cuts every column to "…"
        rows = verdict_rows(view)
        label_w = min(max([len(label) for label, _, _ in rows] + [16]), 22)
        if width >= label_w + MIN_BAR + len(" 100%") + 1:
            bar_w = width - label_w - len(" 100%") - 1
            table = Table.grid(padding=(0, 1))
            table.add_column(no_wrap=True, width=label_w)
            table.add_column(no_wrap=True)
            table.add_column(no_wrap=True, justify="right")
            for i, (label, share, number) in enumerate(rows):
                table.add_row(Text(label, overflow="ellipsis"),
                              Text(bar(share, bar_w), self._style("bar" if i < rows_of_speed(view) else "cause")), number)
            body: Table | Group = table
        else:  # too narrow for bars: the number first, then its label (cut with "…" only at its end; `v` shows it whole)
            body = Group(*(Text(f"{number:>4} {label}", no_wrap=True, overflow="ellipsis") for label, _, number in rows))
        advice = advice_of(view)
        parts = [Text(advice if self.whole else _two_lines(advice, width), style=self._style("fix"))] if advice else []
        head = Text(f"{view.measured_tok_s:.1f} tok/s measured", no_wrap=True, overflow="ellipsis")
        return Group(*parts, head, body)  # the headline sentence is the decode-speed finding's summary

    @property
    def plain(self) -> str:
        """The panel's words and numbers, uncut (the full-text view's tests read them)."""
        view = self.view
        if view is None:
            return ""
        advice = advice_of(view)
        rows = [f"{number:>4} {label}" for label, _, number in verdict_rows(view)]
        return "\n".join([advice, f"{view.measured_tok_s:.1f} tok/s measured", *rows]).strip()

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(f"verdict--{name}", partial=True)


def advice_of(view: VerdictView) -> str:
    """What to do: the fix first, or at the card's limit the options."""
    if view.fix_first:
        return f"Fix first: {view.fix_first}"
    return f"At the card's limit; options: {view.limit_options}" if view.limit_options else ""


def verdict_rows(view: VerdictView) -> list[tuple[str, float, str]]:
    """(label, fraction, number) per bar: measured against the ceiling (and the V100 reference), then each cause."""
    speed = view.measured_tok_s / view.ceiling_tok_s if view.ceiling_tok_s else 0.0
    rows = [(f"of ceiling {view.ceiling_tok_s:.1f}", speed, f"{speed:.0%}")]
    if view.reference_tok_s:
        ref = view.measured_tok_s / view.reference_tok_s
        rows.append((view.reference_label or f"of {view.reference_tok_s:g}", ref, f"{ref:.0%}"))
    rows += [(c.label, c.share or 0.0, "n/a" if c.share is None else f"{c.share:.0%}") for c in view.causes]
    return rows


def rows_of_speed(view: VerdictView) -> int:
    return 2 if view.reference_tok_s else 1


def _two_lines(text: str, width: int) -> str:
    """At most two lines, so the bars stay in sight on 80x24; the whole fix is one key away (`v`) and in the
    decode-speed detail."""
    lines = textwrap.wrap(text, max(width, 2))
    if len(lines) <= 2:
        return "\n".join(lines)
    return lines[0] + "\n" + lines[1][: width - 1].rstrip() + "…"
