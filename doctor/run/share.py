"""A report as it may be sent (--json, --markdown, -o, the TUI's saves and copy): redacted with the identities of the
machine that gathered it, when that is this one. The gatherer reads them (doctor/facts/host/identities.py); the redactor
is handed them (doctor/render/redact.py) and reads nothing itself."""

from __future__ import annotations

from typing import TYPE_CHECKING

from doctor.facts.host.identities import identities_for
from doctor.render.redact import shareable

if TYPE_CHECKING:
    from doctor.model.report import Report


def shared_report(report: Report, redact: bool = True) -> Report:
    """`report` redacted (shareable), or as it is when redact is False (--no-redact): then nothing is gathered."""
    return shareable(report, machine=identities_for(report)) if redact else report
