"""How `plan` and `fit` hand their answer over: -o gets the JSON whole, then the sortable screen on an interactive
terminal, else JSON, Markdown or text on stdout. One place, so the two commands cannot drift apart."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Callable, TypeVar

from doctor.cli.output import text_width, write_whole
from doctor.model.errors import UsageError
from doctor.render.untrusted import json_for_terminal, visible

T = TypeVar("T")  # the answer: a plan or a ranking


def wants_screen(args: argparse.Namespace) -> bool:
    """The sortable screen on an interactive terminal; text for pipes, files, --json, --markdown or --no-tui."""
    if args.json or args.markdown or args.no_tui or os.environ.get("TERM") == "dumb":
        return False
    return sys.stdout.isatty() and sys.stdin.isatty()


def hand_over(args: argparse.Namespace, what: str, answer: T, as_json: Callable[[T], str],
              as_markdown: Callable[[T], str], as_text: Callable[[T, int, bool], str],
              open_screen: Callable[[T], object]) -> None:
    """what: the answer's name in an error ("the plan"); as_text(answer, width, verbose) renders for this terminal."""
    if args.output:
        try:
            write_whole(args.output, as_json(answer) + "\n")  # whole or as it was
        except OSError as exc:
            raise UsageError(f"cannot write {what} to {args.output}: {exc.strerror}") from None
    if wants_screen(args):
        open_screen(answer)
    elif args.json:
        print(json_for_terminal(as_json(answer)))
    elif args.markdown:
        print(as_markdown(answer))
    else:
        print(visible(as_text(answer, text_width(sys.stdout), args.verbose)))
