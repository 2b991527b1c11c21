"""Untrusted text (log lines, paths, names from a report) made safe to print: control characters visible.

A log can carry OSC 52 (writes the clipboard), ESC]0; (the window title) or ESC[2J (clears the screen);
printed raw, the log would drive the user's terminal. Every renderer (text, Markdown, the TUI) passes
untrusted text through `visible`.
"""

from __future__ import annotations

import re

CONTROLS = _CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMES = {"\x1b": "^[", "\x07": "^G", "\x08": "^H", "\x7f": "^?", "\r": "^M"}


def visible(text: str) -> str:
    """`text` with every control character (tab and newline aside) shown as ^[ or \\xNN / \\uNNNN."""
    return _CONTROLS.sub(_shown, text)


def _shown(m: re.Match) -> str:
    ch = m.group()
    if ch in _NAMES:
        return _NAMES[ch]
    return f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}"


def json_for_terminal(text: str) -> str:
    """JSON text whose strings hold no raw C1 control or bidi character (json.dumps escapes only C0 ones): each is
    written as a JSON \\uNNNN escape, so the document stays the same JSON and prints safely."""
    return _CONTROLS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


# -- Markdown: text that stays text in a table cell, a code span, a fenced block and inside <details> ------------
def md_text(text: str) -> str:
    """Untrusted text for a Markdown line or table cell: controls visible, one line, `|` escaped, and `<`/`>` as
    entities, so `</details><h1>` in a GPU name is shown, not obeyed."""
    return visible(text).replace("\n", " ").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def md_code(text: str) -> str:
    """A code span that holds whatever `text` holds: fenced by one backtick more than its longest run of them."""
    body = visible(text).replace("\n", " ").replace("|", "\\|")
    ticks = "`" * (_longest_backtick_run(body) + 1)
    pad = " " if body.startswith("`") or body.endswith("`") else ""
    return f"{ticks}{pad}{body}{pad}{ticks}"


def md_fence(lines: list[str] | tuple[str, ...], lang: str = "") -> list[str]:
    """A fenced code block of `lines` that no line can close early: the fence is longer than any backtick run."""
    shown = [visible(line) for line in lines]
    fence = "`" * max(3, max((_longest_backtick_run(line) for line in shown), default=0) + 1)
    return [fence + lang, *shown, fence]


def _longest_backtick_run(text: str) -> int:
    return max((len(run) for run in re.findall("`+", text)), default=0)
