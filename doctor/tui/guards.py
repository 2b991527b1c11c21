"""Handlers that may still run once the app has torn its screens down (a quit while the checks' worker posts, a
highlight pending as the list closes, the panels' mount after the first frame): with nothing left to draw on they do
nothing, instead of ending the exit in an IndexError or a mount on a removed widget (exit 4)."""

from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

from textual.app import App
from textual.widget import Widget

AppT = TypeVar("AppT", bound=App[Any])
WidgetT = TypeVar("WidgetT", bound=Widget)


def while_shown(handler: Callable[..., Any]) -> Callable[..., Any]:
    """An app's handler or timer: with no screen left it does nothing."""

    @functools.wraps(handler)
    def guarded(self: App[Any], *args: Any) -> Any:
        if self.screen_stack:
            return handler(self, *args)
        return None

    return guarded


def while_attached(handler: Callable[..., Any]) -> Callable[..., Any]:
    """A widget's handler: once it is off the screen (or the app is exiting) it does nothing."""

    @functools.wraps(handler)
    def guarded(self: Widget, *args: Any) -> Any:
        if self.is_attached:
            return handler(self, *args)
        return None

    return guarded
