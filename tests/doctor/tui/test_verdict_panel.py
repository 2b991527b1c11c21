"""Issue 26: the verdict panel reads at any width. It drew its bars for at least 20 columns whatever it had, so at
60x15 every column was cut to "…" ("of ceiling … … …"); now it draws for the width it has, and when bars would
not fit, each number comes first and only the end of its label may be cut."""

from __future__ import annotations

import asyncio

import pytest
from textual.app import App, ComposeResult

from doctor.render.panels import verdict_view
from doctor.run.session import story_session
from doctor.tui.verdict_panel import VerdictPanel

STAGE = "seed-2-exl2-4.25bpw"  # four bars: the ceiling, the V100 reference, CPU offload, KV cache reads, unexplained


def drawn_at(width: int, view) -> list[str]:
    class One(App):
        CSS = f"VerdictPanel {{ width: {width}; height: auto; border: round white; padding: 0 1; }}"

        def compose(self) -> ComposeResult:
            yield VerdictPanel()

    async def main():
        app = One()
        async with app.run_test(size=(max(width, 20) + 2, 20)) as pilot:
            panel = app.query_one(VerdictPanel)
            panel.show(view)
            await pilot.pause()
            return ["".join(seg.text for seg in panel.render_line(y)) for y in range(panel.size.height)]

    return asyncio.run(asyncio.wait_for(main(), 30))


@pytest.mark.parametrize("width", [18, 24, 30, 42, 60])
def test_every_bar_keeps_its_number_and_label_at_this_width(width):
    view = verdict_view(dict(story_session(STAGE).story)[STAGE].verdict)
    lines = drawn_at(width, view)
    text = "\n".join(lines)
    assert "… …" not in text, text
    rows = [(f"of ceiling {view.ceiling_tok_s:.1f}", f"{view.measured_tok_s / view.ceiling_tok_s:.0%}"),
            (view.reference_label, f"{view.measured_tok_s / view.reference_tok_s:.0%}")]
    rows += [(c.label, f"{c.share:.0%}") for c in view.causes]
    for label, number in rows:
        row = next((line for line in lines if line.strip("│ ").startswith(label[:4]) or f"{number} {label[:4]}" in line), None)
        assert row is not None and number in row, (label, number, text)
    assert "25.0 tok/s" in text
    assert ("█" in text) == (width >= 32)  # bars only where a label, a bar of 6 and its number fit
