"""Issue 13: the cursor row and the state glyphs stay readable, in colour and under NO_COLOR: every glyph as the
screen really draws it (the rendered line, after textual's NO_COLOR filter) reaches WCAG AA's 4.5:1 against its
own background. https://www.w3.org/TR/WCAG21/#contrast-minimum"""

from __future__ import annotations

import pytest
from tui_support import fixture_session, run_app, settle

from doctor.tui.app import DoctorApp

WARN_AND_FAIL = "p40-r470-torch-2.1-cu121.json"  # a warning, two failures, passes and a skip on one screen

AA = 4.5
GLYPHS = set("✓!✗–☠i")


def luminance(rgb: tuple[int, int, int]) -> float:
    """WCAG relative luminance of an sRGB triplet. https://www.w3.org/TR/WCAG21/#dfn-relative-luminance"""
    def channel(c: int) -> float:
        c = c / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_contrast_ratio_matches_wcag_reference_values():
    assert contrast((0, 0, 0), (255, 255, 255)) == pytest.approx(21.0)
    assert contrast((118, 118, 118), (255, 255, 255)) == pytest.approx(4.54, abs=0.01)  # #767676: the AA grey


def glyph_segments(widget, y: int):
    """(glyph, foreground, background) of each state glyph on line y as drawn: the widget's line through the
    app's own line filters (under NO_COLOR, textual's Monochrome), as the compositor sends it."""
    from rich.segment import Segment
    from rich.style import Style

    segments = [Segment(text, style or Style(), control) for text, style, control in widget.render_line(y)]
    app = widget.app
    for line_filter in app.get_line_filters() if hasattr(app, "get_line_filters") else app._filters:  # textual 2
        segments = line_filter.apply(segments, widget.background_colors[1])
    for seg in segments:
        glyph = seg.text.strip()[:1]
        if glyph in GLYPHS and seg.style is not None:
            yield glyph, seg.style.color.get_truecolor(), seg.style.bgcolor.get_truecolor()


@pytest.mark.parametrize("no_color", [False, True], ids=["colour", "NO_COLOR"])
def test_state_glyphs_and_the_cursor_row_reach_aa_contrast(monkeypatch, no_color):
    if no_color:
        monkeypatch.setenv("NO_COLOR", "1")

    async def script(app, pilot):
        await settle(app, pilot)
        await pilot.pause()
        checklist, head = app.checklist, app.query_one("#detail-head")
        cursor_id = checklist.highlighted_id
        rows = []
        for y in range(checklist.size.height):
            on_cursor = f" {cursor_id}" in "".join(seg.text for seg in checklist.render_line(y))
            rows += [(on_cursor, *drawn) for drawn in glyph_segments(checklist, y)]
        heads = list(glyph_segments(head, 0))
        return app.no_color, rows, heads

    seen_no_color, rows, heads = run_app(DoctorApp(fixture_session(WARN_AND_FAIL, checks=None)), script)
    assert seen_no_color is no_color
    assert any(cursor and glyph == "✗" for cursor, glyph, _, _ in rows)  # the list opened on the failure
    assert {glyph for cursor, glyph, _, _ in rows if not cursor} >= {"✓", "!", "✗", "–"}
    low = [(cursor, glyph, fg, bg, round(contrast(fg, bg), 2)) for cursor, glyph, fg, bg in rows if contrast(fg, bg) < AA]
    assert low == []
    low_head = [(text, fg, bg, round(contrast(fg, bg), 2)) for text, fg, bg in heads if contrast(fg, bg) < AA]
    assert heads and low_head == []  # the FAIL heading of the details, too
