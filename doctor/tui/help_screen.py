"""The help screen (`?`, F1): every key, from doctor/tui/keys.py; any key closes it."""

from __future__ import annotations

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from doctor.tui.keys import FULL_TEXT_KEYS, MAIN_KEYS, STORY_KEYS


def keys_table(title: str, rows: tuple[tuple[str, str], ...]) -> Table:
    table = Table(title=title, title_justify="left", show_header=False, box=None, padding=(0, 1), expand=True)
    table.add_column(no_wrap=True, style="bold")
    table.add_column(ratio=1)
    for keys, what in rows:
        table.add_row(keys, what)
    return table


class HelpScreen(ModalScreen[None]):
    """Dismissed by escape, q, ? or F1."""

    BINDINGS = [Binding("escape,q,question_mark,f1", "close", "Close", key_display="Esc"),
                Binding("j", "scroll(1)", "Scroll", show=False), Binding("k", "scroll(-1)", "Up", show=False)]

    def __init__(self, story: bool = False) -> None:
        super().__init__()
        self.story = story

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            if self.story:
                yield Static(keys_table("Story view", STORY_KEYS))
            yield Static(keys_table("Checks and report", MAIN_KEYS))
            yield Static(keys_table("Full text (v)", FULL_TEXT_KEYS))
            yield Static("j k ↑ ↓ PageUp PageDown scroll; escape closes this help.", id="help-foot")

    def on_mount(self) -> None:
        self.query_one("#help-box").border_title = "Keys"

    def action_scroll(self, step: int) -> None:
        box = self.query_one("#help-box", VerticalScroll)
        (box.scroll_down if step > 0 else box.scroll_up)(animate=False)

    def action_close(self) -> None:
        self.dismiss(None)
