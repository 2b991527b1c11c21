"""Exit codes a script can branch on; documented in --help and the README."""

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0  # every check passed
    WARNINGS = 1  # warnings, no failures
    FAILURES = 2  # at least one check failed
    USAGE = 3  # the user's input was wrong: bad flag, missing or broken file, unknown id
    INTERNAL = 4  # the doctor itself failed (a bug: please report it)
    INTERRUPTED = 130  # Ctrl-C, a cancelled probe, or the TUI left early: 128 + SIGINT, as shells report it


def interrupt_exit(signum: int | None = None) -> int:
    """128 + the signal that ended the run, as shells report it: 130 SIGINT (also a cancel with no signal),
    143 SIGTERM, 129 SIGHUP."""
    return 128 + (signum or 2)


EXIT_CODE_HELP = """exit codes:
  0  all checks passed
  1  warnings only
  2  at least one check failed
  3  usage or input error (bad flag, missing/broken file, unknown check id)
  4  the doctor itself failed (please report it)
  130  interrupted (Ctrl-C, a cancelled probe)
  143/129  interrupted by SIGTERM/SIGHUP; on any interrupt children are reaped and -o FILE is written"""
