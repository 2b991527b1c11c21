"""A one-line "save as" prompt: the default path is filled in, enter saves, escape cancels."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class SaveDialog(ModalScreen[str | None]):
    """Dismisses with the chosen path, or None when cancelled."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, what: str, default_path: str) -> None:
        super().__init__()
        self.what = what
        self.default_path = default_path

    def compose(self) -> ComposeResult:
        with Vertical(id="save-box"):
            yield Static(f"Save the {self.what} to:", id="save-title")  # wraps: nothing of it is cut
            yield Input(value=self.default_path, id="save-path")
            yield Static("enter saves, escape cancels", id="save-keys")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
