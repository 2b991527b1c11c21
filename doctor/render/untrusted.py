"""Untrusted text (log lines, paths, names from a report) made safe to print: control characters visible.

A log can carry OSC 52 (writes the clipboard), ESC]0; (the window title) or ESC[2J (clears the screen);
printed raw, the log would drive the user's terminal. Every renderer (text, Markdown, the TUI) passes
untrusted text through `visible`.
"""

from __future__ import annotations

import re

_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMES = {"\x1b": "^[", "\x07": "^G", "\x08": "^H", "\x7f": "^?", "\r": "^M"}


def visible(text: str) -> str:
    """`text` with every control character (tab and newline aside) shown as ^[ or \\xNN / \\uNNNN."""
    return _CONTROLS.sub(_shown, text)


def _shown(m: re.Match) -> str:
    ch = m.group()
    if ch in _NAMES:
        return _NAMES[ch]
    return f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}"
