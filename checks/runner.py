"""Run the ordered checks: dependencies, isolation of crashing checks, and events for live UIs."""

from __future__ import annotations

import time
import traceback
from typing import Callable, Iterable

from checks.base import Check, CheckContext
from doctor.model.events import CheckEvent, CheckFinished, CheckStarted
from doctor.model.facts import Facts
from doctor.model.findings import Finding, Status
from doctor.model.plan import Plan


def _past(status: Status) -> str:
    return {Status.FAIL: "failed", Status.SKIP: "was skipped", Status.ERROR: "crashed", Status.WARN: "warned"}.get(status, status.value)


def run_one(check: Check, ctx: CheckContext) -> Finding:
    for dep in check.depends_on:
        prior = ctx.prior.get(dep)
        if prior is not None and prior.status in check.blocked_by:
            return check.finding(Status.SKIP, f"skipped: needs {dep}, which {_past(prior.status)}",
                                 {"needs": dep.value})
    start = time.perf_counter()
    try:
        finding = check.run(ctx)
    except Exception as exc:  # a crashing check is a ☠ line, not a crashed doctor
        frame, lineno = list(traceback.walk_tb(exc.__traceback__))[-1]  # no source lookup: a replay reads no file
        finding = check.finding(
            Status.ERROR, f"the check itself crashed: {type(exc).__name__}: {exc}",
            {"where": f"{frame.f_code.co_filename.rsplit('/', 1)[-1]}:{lineno}"},
            fix="This is a bug in v100-doctor; please report it with the --json output.",
        )
    return finding.with_duration((time.perf_counter() - start) * 1000)


def run_checks(facts: Facts, plan: Plan, checks: Iterable[Check],
               on_event: Callable[[CheckEvent], None] | None = None) -> list[Finding]:
    ctx = CheckContext(facts=facts, plan=plan)
    findings: list[Finding] = []
    for check in checks:
        if on_event:
            on_event(CheckStarted(check.id, check.title))
        finding = run_one(check, ctx)
        ctx.prior[check.id] = finding
        findings.append(finding)
        if on_event:
            on_event(CheckFinished(finding))
    return findings
