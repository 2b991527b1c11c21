"""Confirm or rule out each matched pitfall on a machine, by running the doctor's own checks on its facts.

No check logic is repeated here: the checks a signature names (and the checks they depend on) run
through doctor.run.pipeline.diagnose (checks.runner.run_checks on the facts, with --model read as the
main command does), and their findings decide. A failing or warning check confirms;
all of them passing rules the pitfall out (unless the signature says a pass leaves it open); a
skipped, crashed or not-yet-existing check means "cannot tell". A log that names a different card
than the one in the facts is never judged against them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable

from checks.base import Check
from checks.registry import all_checks
from doctor.knowledge.signatures import Signature, by_id
from doctor.model.facts import Facts
from doctor.model.findings import Finding, Status
from doctor.model.log_analysis import Confirmation, MatchGroup
from doctor.model.plan import Plan
from doctor.model.unknown import known
from doctor.run.pipeline import diagnose

CONFIRMED, RULED_OUT, CANNOT_TELL = "confirmed", "ruled-out", "cannot-tell"
_VERB = {Status.FAIL: "failed", Status.WARN: "warns", Status.PASS: "passed", Status.SKIP: "was skipped",
         Status.ERROR: "crashed", Status.INFO: "only informs"}


def checks_needed(ids: Iterable[str]) -> tuple[Check, ...]:
    """The named checks and everything they depend on, in the registry's order."""
    registry: dict[str, Check] = {c.id: c for c in all_checks()}
    wanted: set[str] = set()
    todo = [i for i in ids if i in registry]
    while todo:
        cid = todo.pop()
        if cid not in wanted:
            wanted.add(cid)
            todo.extend(d for d in registry[cid].depends_on if d in registry)
    return tuple(c for c in all_checks() if c.id in wanted)


def confirm_matches(matches: Iterable[MatchGroup], plan: Plan,
                    facts: Facts | None = None) -> tuple[tuple[MatchGroup, ...], Facts]:
    """Run the needed checks through the doctor's own pipeline (which gathers live facts when none are given,
    and reads --model); return the judged matches and the facts they were judged on."""
    matches = tuple(matches)
    report = diagnose(plan, facts, checks=checks_needed({c for m in matches for c in m.checks}))
    findings = {f.id: f for f in report.findings}
    return tuple(replace(m, confirmation=judge(m, findings, report.facts, plan)) for m in matches), report.facts


def judge(match: MatchGroup, findings: dict[str, Finding], facts: Facts, plan: Plan) -> Confirmation:
    other = _other_machine(match, facts, plan)
    if other:
        return Confirmation(CANNOT_TELL, other)
    present = [findings[c] for c in match.checks if c in findings]
    missing = [c for c in match.checks if c not in findings]
    for f in present:
        if f.status in (Status.FAIL, Status.WARN):
            return Confirmation(CONFIRMED, _said(f), f.id, f.status.value)
    sig = by_id(match.signature)
    noted = _noted_limit(sig, findings)
    if noted is not None:
        return noted
    passed = [f for f in present if f.status == Status.PASS]
    said = "; ".join(_said(f) for f in present)
    if not present:
        names = ", ".join(f"`{c}`" for c in missing)
        return Confirmation(CANNOT_TELL, f"this doctor has no {names} check yet, so the machine cannot confirm it")
    if len(passed) < len(present):
        f = next(f for f in present if f.status != Status.PASS)
        return Confirmation(CANNOT_TELL, said, f.id, f.status.value)
    if missing:
        return Confirmation(CANNOT_TELL, f"{said}; but there is no {', '.join(missing)} check yet to rule it out",
                            passed[0].id, Status.PASS.value)
    if sig is not None and not sig.rules_out_on_pass:
        return Confirmation(CANNOT_TELL, f"{said}; {sig.pass_note}", passed[0].id, Status.PASS.value)
    return Confirmation(RULED_OUT, said, passed[0].id, Status.PASS.value)


def _noted_limit(sig: Signature | None, findings: dict[str, Finding]) -> Confirmation | None:
    """A card's limit that its check notes in a pass (the signature's confirmed_by_evidence): False confirms."""
    if sig is None or not sig.confirmed_by_evidence:
        return None
    check_id, key = sig.confirmed_by_evidence
    f = findings.get(check_id)
    if f is None or f.status != Status.PASS or f.evidence.get(key) is not False:
        return None
    return Confirmation(CONFIRMED, _said(f), f.id, f.status.value)


def _said(f: Finding) -> str:
    summary = f.summary.removeprefix("skipped: ") if f.status == Status.SKIP else f.summary
    return f"{f.id} {_VERB[f.status]}: {summary}"


def _other_machine(match: MatchGroup, facts: Facts, plan: Plan) -> str:
    """Why the log cannot be from the GPU in these facts, or "" when nothing says so."""
    gpu = facts.gpu(plan.gpu_index)
    if gpu is None:
        return ""
    log_cc = match.numbers.get("card_cc")
    if isinstance(log_cc, str) and known(gpu.compute_capability) and log_cc != gpu.compute_capability:
        return (f"the log is from a cc {log_cc} card and this GPU {plan.gpu_index} is cc {gpu.compute_capability}: "
                "explain it on the machine that wrote the log, or with --replay and that machine's report")
    log_total = match.numbers.get("total_mib")
    if isinstance(log_total, float) and known(gpu.memory_total_mib) and gpu.memory_total_mib:
        ratio = log_total / gpu.memory_total_mib
        if not 0.9 <= ratio <= 1.05:
            return (f"the log's GPU has {log_total / 1024:.2f} GiB in total and this GPU {plan.gpu_index} has "
                    f"{gpu.memory_total_mib / 1024:.2f} GiB: the log is from another card")
    return ""
