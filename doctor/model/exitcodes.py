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

    OK = 0, "all checks passed"
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

# Each subcommand's own codes, in its own words (its --help prints them; docs/reference/exit-codes.md lists them all).
# The signal codes (129, 130, 141, 143) mean the same for every command and are added to each.
SIGNAL_CODES = (ExitCode.HANGUP, ExitCode.INTERRUPTED, ExitCode.BROKEN_PIPE, ExitCode.TERMINATED)
_BUG = "the doctor itself failed (a bug: please report it)"
COMMAND_CODES: dict[str, tuple[tuple[ExitCode, str], ...]] = {
    "explain": (
        (ExitCode.OK, "nothing error-looking in the log"),
        (ExitCode.WARNINGS, "warning-level pitfalls, or error-looking lines no signature explains"),
        (ExitCode.FAILURES, "a known error that this machine did not rule out"),
        (ExitCode.USAGE, "the log cannot be read (missing, empty, binary, unknown --encoding) or another input is wrong"),
        (ExitCode.INTERNAL, _BUG)),
    "bundle": (
        (ExitCode.OK, "the bundle was written, whatever the findings (their status is on stderr and in MANIFEST.json)"),
        (ExitCode.USAGE, "bad input (a --model that names nothing, an unreadable --log or --replay) or -o cannot be written"),
        (ExitCode.INTERNAL, _BUG)),
    "watch": (
        (ExitCode.OK, "all checks passed over the window"),
        (ExitCode.WARNINGS, "warnings only"),
        (ExitCode.FAILURES, "a check failed, or NVML stopped answering during the window (the samples taken are reported)"),
        (ExitCode.USAGE, "the pid does not exist, is another user's or exits before the window ends (the samples taken "
                         "are reported), or another input is wrong"),
        (ExitCode.INTERNAL, _BUG)),
    "probe": (
        (ExitCode.OK, "all checks passed, the probe's included"),
        (ExitCode.WARNINGS, "warnings only"),
        (ExitCode.FAILURES, "a check failed (the probe's findings included)"),
        (ExitCode.USAGE, "bad input (a --model that names no model, a bad flag)"),
        (ExitCode.INTERNAL, _BUG)),
    "fleet": (
        (ExitCode.OK, "every row passed"),
        (ExitCode.WARNINGS, "the worst row has warnings"),
        (ExitCode.FAILURES, "a host has a failed check"),
        (ExitCode.USAGE, "a path names nothing or holds no report, or the worst row is a file that is not a readable "
                         "report, or -o cannot be written"),
        (ExitCode.INTERNAL, "a report records a check that crashed on its host, or the doctor itself failed (a bug)")),
    "plan": (
        (ExitCode.OK, "an option fits the asked context on every card"),
        (ExitCode.WARNINGS, "nothing fits the asked context on some card"),
        (ExitCode.USAGE, "bad input (MODEL not found or not readable, an unknown card)"),
        (ExitCode.INTERNAL, _BUG)),
    "fit": (
        (ExitCode.OK, "a catalogued model fits the asked context on every card set"),
        (ExitCode.WARNINGS, "nothing in the catalogue fits (after the filters) on some card set"),
        (ExitCode.USAGE, "bad input (an unknown card, --min-params above --max-params, -o cannot be written)"),
        (ExitCode.INTERNAL, _BUG)),
    "demo": (
        (ExitCode.OK, "the tour was shown (plain `demo` always exits 0), or the examples named passed"),
        (ExitCode.WARNINGS, "`demo NAME`: the example has warnings (as --replay of it exits)"),
        (ExitCode.FAILURES, "`demo NAME`: the example has a failed check (as --replay of it exits)"),
        (ExitCode.USAGE, "no example of that name, or --json with more than one"),
        (ExitCode.INTERNAL, _BUG)),
}


def command_codes(command: str) -> tuple[tuple[ExitCode, str], ...]:
    """A subcommand's codes and their meanings, the signal codes last."""
    return COMMAND_CODES[command] + tuple((c, c.description) for c in SIGNAL_CODES)


def command_exit_help(command: str) -> str:
    """A subcommand's --help epilog: its own codes only."""
    return "\n".join([f"exit codes of {command}:"] + [f"  {c.value}  {meaning}" for c, meaning in command_codes(command)]
                     + [f"  {INTERRUPT_NOTE}"])


def command_code_table(command: str) -> str:
    rows = [f"| {c.value} | {meaning.replace('|', chr(92) + '|')} |" for c, meaning in command_codes(command)]
    return "\n".join(["| code | meaning |", "|---|---|"] + rows)
