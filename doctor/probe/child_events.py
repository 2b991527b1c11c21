"""What an engine probe's child prints, one JSON event a line, and how it ends when its engine will not import (the
parent reads kind "not-installed" and exit 3). Standard library only: the children load it before the engine."""

from __future__ import annotations

import json
from typing import Any

NOT_INSTALLED_EXIT = 3


def say(**event: Any) -> None:
    print(json.dumps(event), flush=True)


def not_installed(what: str, exc: ImportError) -> int:
    """Report that `what` does not import, and the child's exit code for it."""
    say(event="error", kind="not-installed", message=f"{what} is not importable: {exc}")
    return NOT_INSTALLED_EXIT
