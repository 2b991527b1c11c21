"""The doctor's one exception hierarchy.

InputError and its kinds are the user's mistakes (a bad flag, a missing or broken file): the CLI
prints their one-line message and exits 3. Anything else that escapes is a bug in the doctor (exit 4).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from doctor.model.facts import Facts


class DoctorError(Exception):
    """Base of every exception the doctor raises on purpose."""


class InputError(DoctorError):
    """The user's input cannot be used; the message names the problem and the fix (exit 3)."""


class UsageError(InputError):
    """The command line is wrong."""


class OutputFailed(InputError):
    """The output cannot be written (a full disk, a closed or broken stream): an input/output error, exit 3."""


class ReplayError(InputError):
    """A file given to --replay (or a bundle, or an example) cannot be used."""


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised in the main thread like Ctrl-C's KeyboardInterrupt: every `except
    KeyboardInterrupt` cleanup runs, and the CLI exits 128 + signum after writing what it has."""

    def __init__(self, signum: int, partial_facts: Facts | None = None) -> None:
        super().__init__(signum)
        self.signum = signum
        self.partial_facts = partial_facts


class LogInputError(InputError):
    """A log given to `explain` cannot be read as text; the message names the problem and what to do."""
