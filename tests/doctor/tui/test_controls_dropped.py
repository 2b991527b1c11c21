"""The TUI's sanitiser: every line Textual draws loses its control characters (OSC 52, title, screen clear, C1)."""

from rich.segment import Segment
from textual.color import Color
from tui_support import HEALTHY, fixture_session

from doctor.tui.app import DoctorApp
from doctor.tui.controls_dropped import CONTROLS_DROPPED, ControlsDropped

HOSTILE = "Tesla V100\x1b]52;c;cHduZWQ=\x07\x1b]0;pwned\x07\x1b[2J\x9b2J"


def test_controls_are_dropped_and_the_text_kept():
    out = ControlsDropped().apply([Segment(HOSTILE), Segment("plain")], Color(0, 0, 0))
    assert out[0].text == "Tesla V100]52;c;cHduZWQ=]0;pwned[2J2J" and out[1].text == "plain"


def test_the_doctor_app_draws_through_it():
    assert CONTROLS_DROPPED in DoctorApp(fixture_session(HEALTHY, checks=None)).get_line_filters()
