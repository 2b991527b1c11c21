"""The one ordered list of checks. Each group lives in its own package; order is explicit here."""

from __future__ import annotations

from checks.base import Check
from checks.env import ENV_CHECKS


def all_checks() -> tuple[Check, ...]:
    """Environment first, then model, then runtime health; later groups append here."""
    return tuple(ENV_CHECKS)


def check_ids() -> list[str]:
    return [c.id for c in all_checks()]


def by_id(check_id: str) -> Check | None:
    return next((c for c in all_checks() if c.id == check_id), None)
