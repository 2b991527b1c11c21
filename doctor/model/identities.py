"""What identifies the machine the doctor runs on and its user: gathered (doctor/facts/host/identities.py) only to be
hidden from what a user shares (doctor/render/redact.py), never shown or saved."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Identities:
    home: str = ""  # the user's home directory
    user: str = ""  # the login name; "" when there is none (a container without an /etc/passwd entry)
    hostnames: tuple[str, ...] = ()  # the host name and the fully qualified one
    environment: tuple[tuple[str, str], ...] = field(default=(), repr=False)  # every variable: redaction keeps the secret ones
