"""Exit codes a script can branch on: one table, read by the code, `--help`'s epilog and the README's table
(tests/doctor/model/test_exitcodes.py holds the README to it)."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Each member carries what it means, in the words --help and the README print."""

    description: str

    def __new__(cls, value: int, description: str) -> "ExitCode":
        member = int.__new__(cls, value)
        member._value_ = value
        member.description = description
        return member

    OK = 0, "all checks passed; for `bundle`: the bundle was written (its findings' status is on stderr and in MANIFEST.json)"
    WARNINGS = 1, "warnings only"
    FAILURES = 2, "at least one check failed"
    USAGE = 3, "usage or input error (bad flag, missing or broken file, unknown check id)"
    INTERNAL = 4, "the doctor itself failed (a bug: please report it)"
    NOT_RUN = 5, "a check asked for with --check did not run (skipped: its line says what it needs); nothing failed"
    HANGUP = 129, "interrupted by SIGHUP (the terminal was closed)"
    INTERRUPTED = 130, "interrupted: Ctrl-C (SIGINT), a cancelled probe, or the TUI left before the checks finished"
    BROKEN_PIPE = 141, "stdout's reader went away (`| head -1`): the doctor stops quietly, like other Unix tools"
    TERMINATED = 143, "interrupted by SIGTERM"


INTERRUPT_NOTE = ("129, 130 and 143 are 128 + the signal, as shells report it; on any of them every child the doctor "
                  "started is stopped and reaped, and -o FILE is still written with what was gathered")


def interrupt_exit(signum: int | None = None) -> int:
    """128 + the signal that ended the run, as shells report it: 130 SIGINT (also a cancel with no signal),
    143 SIGTERM, 129 SIGHUP."""
    return 128 + (signum or 2)


def exit_code_help() -> str:
    """--help's epilog: one line per code, then what an interrupt still does."""
    return "\n".join(["exit codes:"] + [f"  {c.value}  {c.description}" for c in ExitCode] + [f"  {INTERRUPT_NOTE}"])


def exit_code_table() -> str:
    """The README's Markdown table, row for row."""
    rows = [f"| {c.value} | {c.description.replace('|', chr(92) + '|')} |" for c in ExitCode]
    return "\n".join(["| code | meaning |", "|---|---|"] + rows)


EXIT_CODE_HELP = exit_code_help()
