"""A one-line "save as" prompt: the default path is filled in, enter saves, escape cancels."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label


class SaveDialog(ModalScreen[str | None]):
    """Dismisses with the chosen path, or None when cancelled."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, what: str, default_path: str) -> None:
        super().__init__()
        self.what = what
        self.default_path = default_path

    def compose(self) -> ComposeResult:
        with Vertical(id="save-box"):
            yield Label(f"Save the {self.what} to (enter saves, escape cancels):")
            yield Input(value=self.default_path, id="save-path")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
