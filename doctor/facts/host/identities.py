"""This machine's identities (home, user, host names, environment), read once for redaction: the redactor
(doctor/render/redact.py) is handed them and never reads the machine itself, as Flutter's doctor strips the values
it knows from what it shares."""

from __future__ import annotations

import getpass
import os
import socket
from pathlib import Path
from typing import TYPE_CHECKING

from doctor.model.identities import Identities

if TYPE_CHECKING:  # annotations only: the report model loads when a report is written, not at launch
    from doctor.model.report import Report


def this_machine() -> Identities:
    """Home, user, host names and environment of the machine running the doctor; what cannot be read is left empty."""
    try:
        home = str(Path.home())
    except RuntimeError:  # no home directory can be determined
        home = ""
    try:
        user = getpass.getuser()
    except Exception:  # no user name (a container without an /etc/passwd entry): nothing to hide
        user = ""
    return Identities(home=home, user=user, hostnames=(socket.gethostname(), socket.getfqdn()),
                      environment=tuple(os.environ.items()))


def identities_for(report: Report) -> Identities | None:
    """Whose identities to hide in a report: this machine's for one gathered here; none for a recorded one (a replay
    hides what the report names, not the replaying machine's names)."""
    return None if report.source.recorded else this_machine()
