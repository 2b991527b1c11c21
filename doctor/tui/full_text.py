"""The full text (`v`): every line a screen cuts with "…" to fit (the header, a check's line, a story card, the
probe's phase, the verdict's advice and bars, a plan's answers), whole and wrapped, in one scrollable view."""

from __future__ import annotations

from typing import Iterable

from rich.console import RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.events import Resize
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Footer, Static

from doctor.tui.keys_footer import KeysFooter


def section(title: str, *lines: str) -> Text:
    """A bold title, then its lines (empty ones left out)."""
    text = Text(title, style="bold")
    for line in lines:
        if line:
            text.append("\n" + line)
    return text


class FullTextScreen(ModalScreen[None]):
    """The parts given, one under the other; j/k, arrows and PageUp/PageDown scroll; escape, q or v close it."""

    DEFAULT_CSS = """
    FullTextScreen { align: center middle; }
    #full-box { width: 90%; max-width: 100; height: 1fr; border: round $border; background: $surface; padding: 0 1; }
    #full-box > .full-part { margin: 0 0 1 0; }
    #full-box > VerdictPanel { height: auto; margin: 0 0 1 0; }
    FullTextScreen.-small #full-box { width: 100%; max-width: 100%; border: none; }
    """
    SMALL_BELOW = (80, 24)  # a smaller terminal gets the whole screen, no frame
    BINDINGS = [
        Binding("escape,q,v", "close", "Close", key_display="Esc"),
        Binding("j,down", "scroll(1)", "Scroll", key_display="jk"),
        Binding("k,up", "scroll(-1)", "Up", show=False),
        Binding("pagedown,space", "page(1)", "Page", key_display="PgDn"),
        Binding("pageup", "page(-1)", "Page up", show=False),
    ]

    def __init__(self, title: str, parts: Iterable[RenderableType | Widget]) -> None:
        super().__init__()
        self.title_text = title
        self.parts = list(parts)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="full-box"):
            for part in self.parts:
                yield part if isinstance(part, Widget) else Static(part, classes="full-part")
        yield KeysFooter()

    def on_resize(self, event: Resize) -> None:
        self.set_class(event.size.width < self.SMALL_BELOW[0] or event.size.height < self.SMALL_BELOW[1], "-small")

    def on_mount(self) -> None:
        self.set_class(self.app.size.width < self.SMALL_BELOW[0] or self.app.size.height < self.SMALL_BELOW[1], "-small")
        box = self.query_one("#full-box")
        box.border_title = self.title_text
        box.focus()
        footer = self.query_one(Footer)
        footer.compact = True
        footer.show_command_palette = False

    @property
    def text(self) -> str:
        """What the view holds, as plain text (the tests read it)."""
        return "\n".join(part.plain if isinstance(part, Text) else getattr(part, "plain", str(part)) for part in self.parts)

    def action_scroll(self, step: int) -> None:
        box = self.query_one("#full-box", VerticalScroll)
        (box.scroll_down if step > 0 else box.scroll_up)(animate=False)

    def action_page(self, step: int) -> None:
        box = self.query_one("#full-box", VerticalScroll)
        (box.scroll_page_down if step > 0 else box.scroll_page_up)(animate=False)

    def action_close(self) -> None:
        self.dismiss(None)
