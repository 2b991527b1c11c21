"""How the probe worker reports a failure: the exception it raises and the log tail it keeps.

Which pitfall an error text means is recognised in one place, the signature table
(doctor/knowledge/signatures.py: `probe_failure_kind`), shared with `explain`.
"""

from __future__ import annotations

from doctor.model.ids import FailureKind


def tail(text: str, lines: int = 25, chars: int = 3000) -> str:
    """The end of a log: where a compiler or a traceback says what went wrong."""
    kept = "\n".join(text.rstrip().splitlines()[-lines:])
    return kept[-chars:]


class ProbeFailure(Exception):
    """Raised inside the worker with a kind the runner maps to a finding."""

    def __init__(self, kind: FailureKind, phase: str, message: str, detail: str = ""):
        super().__init__(message)
        self.kind, self.phase, self.message, self.detail = kind, phase, message, detail
