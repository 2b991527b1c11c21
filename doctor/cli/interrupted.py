"""The report `-o FILE` gets when a run is interrupted before its checks finished: what was read, the rest
unknown with why, so the file always says what happened (README: exit codes 129, 130 and 143)."""

from __future__ import annotations

import signal
from dataclasses import replace
from typing import TYPE_CHECKING

from doctor.facts.gather import partial_facts
from doctor.run.pipeline import diagnose

if TYPE_CHECKING:
    from checks.base import Check
    from doctor.model.facts import Facts
    from doctor.model.plan import Plan
    from doctor.model.report import Report


def interrupted_report(plan: Plan, signum: int, checks: tuple[Check, ...] | None = None, partial: Facts | None = None) -> Report:
    """The checks on the facts read before the signal (none: all unknown), marked as a partial report."""
    name = signal.Signals(signum).name
    facts = partial or partial_facts({}, f"not gathered: the run was interrupted ({name})")
    report = diagnose(plan, facts, note=f"interrupted by {name} while gathering", checks=checks)
    return replace(report, errors=(f"interrupted by {name} while gathering facts: the parts not read are unknown",))
