"""What an engine probe's child prints, one JSON event a line, and how it ends when its engine will not import (the
parent reads kind "not-installed" and exit 3). Standard library only: the children load it before the engine."""

from __future__ import annotations

import argparse
import json
from typing import Any

from doctor.probe.more_runs import add_timing_arguments

NOT_INSTALLED_EXIT = 3


def say(**event: Any) -> None:
    print(json.dumps(event), flush=True)


def not_installed(what: str, exc: ImportError) -> int:
    """Report that `what` does not import, and the child's exit code for it."""
    say(event="error", kind="not-installed", message=f"{what} is not importable: {exc}")
    return NOT_INSTALLED_EXIT


def start(ap: argparse.ArgumentParser, argv: list[str] | None, warmup: int) -> argparse.Namespace:
    """The child's flags parsed (its own and the timing ones, with its engine's warm-up default), then its first
    event: the import phase, said before it imports the engine."""
    add_timing_arguments(ap, warmup)
    args = ap.parse_args(argv)
    say(event="phase", phase="import")
    return args
