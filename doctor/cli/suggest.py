"""What a misspelt or misplaced command-line word most likely meant: one line that names the word and the fix.

argparse alone says "unrecognized arguments: explian x.log"; this names the subcommand or flag it was closest to
(difflib), a subcommand written after the options, and a path that the shell split at a space after --model.
"""

from __future__ import annotations

import difflib
import shlex
from typing import Iterable, Sequence

PATH_FLAGS = ("--model",)  # flags that take one path: words left over right after one were most likely part of it


def closest(word: str, choices: Iterable[str]) -> str | None:
    found = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return found[0] if found else None


def _left_after_path(argv: Sequence[str], extras: Sequence[str]) -> tuple[str, str] | None:
    """(flag, its value) when the extras are exactly the words that follow a path flag's value in argv."""
    for i, word in enumerate(argv[:-1]):
        flag, _, inline = word.partition("=")
        if flag not in PATH_FLAGS:
            continue
        value_at = i if inline else i + 1
        after = list(argv[value_at + 1: value_at + 1 + len(extras)])
        if after == list(extras):
            return flag, inline or argv[value_at]
    return None


def unrecognized(prog: str, argv: Sequence[str], extras: Sequence[str], flags: Iterable[str],
                 subcommands: Sequence[str] = ()) -> str:
    """The one-line message for words no option took: what each most likely was, and what to type instead."""
    flags = sorted(f for f in flags if f.startswith("--"))
    words = " ".join(shlex.quote(e) for e in extras)
    after_path = _left_after_path(argv, extras)
    if after_path and not any(e.startswith("-") for e in extras):
        flag, value = after_path
        sub = next((e for e in extras if e in subcommands), None)
        if sub:
            return (f"{flag} takes one path, and {words} was left over; a subcommand goes first: "
                    f"{prog} {sub} ... (or quote a path with a space: {flag} {shlex.quote(' '.join([value, *extras]))})")
        return (f"{flag} takes one path, and {words} was left over; a path with a space needs quotes: "
                f"{flag} {shlex.quote(' '.join([value, *extras]))}")
    for word in extras:
        if word.startswith("-"):
            name = word.partition("=")[0]
            guess = closest(name, flags)
            return f"unknown flag {name}" + (f"; did you mean {guess}?" if guess else f" (all flags: {prog} --help)")
        if word in subcommands:
            return f"the subcommand {word} goes first: {prog} {word} ... (the options it takes: {prog} {word} --help)"
        if subcommands:
            guess = closest(word, subcommands)
            if guess:
                return f"unknown subcommand {word!r}; did you mean {guess!r}? (subcommands: {', '.join(subcommands)})"
    return f"unrecognized arguments: {words}"
