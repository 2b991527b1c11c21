"""Textual's footer, recomposed once per frame: at start-up the bindings change five times in one frame (the focus,
the screen's stack), and each change recomposed the whole key line, which held the first full frame back."""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer


class KeysFooter(Footer):
    """Footer whose binding changes within one frame cost one recompose."""

    _recompose_pending = False

    def bindings_changed(self, screen: Screen) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen and not self._recompose_pending:
            self._recompose_pending = True
            self.call_after_refresh(self._recompose_once)

    async def _recompose_once(self) -> None:
        self._recompose_pending = False
        await self.recompose()
