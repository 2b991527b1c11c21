"""The versioned Report: facts + plan + findings (+ later: samples, probe, verdict), and loading it back.

A report or a bare facts fixture can be replayed: today's checks run on yesterday's facts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from doctor.model.batched import BatchedDecode
from doctor.model.engine_verdict import EngineVerdict
from doctor.model.engines import InForce
from doctor.model.errors import ReplayError
from doctor.model.facts import Facts
from doctor.model.findings import Finding, GpuJudgement
from doctor.model.ids import CheckId
from doctor.model.plan import Plan
from doctor.model.plausible import plan_problem, scrub
from doctor.model.prescription import Prescription
from doctor.model.probe_results import ProbeReport
from doctor.model.serialize import LoadError, from_jsonable, strict_json, to_jsonable, undecodable_escaped
from doctor.model.source import Provenance
from doctor.model.unknown import Unknown
from doctor.model.verdict import Verdict
from doctor.version import __version__

SCHEMA = "v100-doctor/report/1"
SCHEMA_FAMILY = "v100-doctor/report/"


@dataclass(frozen=True)
class Report:
    facts: Facts
    plan: Plan
    findings: tuple[Finding, ...]
    source: Provenance = Provenance()  # this machine live, a replayed file, a recorded example ("live" | "replay:FILE" | "example:NAME" on the wire)
    timings_ms: dict[str, float] = field(default_factory=dict)
    created_at: str = ""
    doctor_version: str = __version__
    schema: str = SCHEMA
    note: str = ""  # provenance of a recorded example or fixture
    probe: ProbeReport | None = None  # the probe's measurements, when it ran (doctor/model/probe_results.py)
    verdict: Verdict | None = None  # measured vs ceiling and why, when a probe measured (doctor/verdict/build.py)
    errors: tuple[str, ...] = ()  # problems that cut the run short (the report is partial)
    prescription: Prescription | None = None  # the machine's one route (checks/prescription/), shown once at the end
    gpus: tuple[GpuJudgement, ...] = ()  # per-GPU findings when several GPUs were judged (worst first)
    engine_in_force: InForce | None = None  # the engine the checks judged and why (absent in reports before issue 35)
    engine_verdict: EngineVerdict | None = None  # an engine's own probe judged (llama.cpp, Transformers, a server)
    batched_decode: BatchedDecode | Unknown | None = None  # 1, 2, 4, 8 ... streams, estimated (doctor/verdict/batched.py;
    # Unknown(reason) where the model or card is not known; absent in reports before issue 38)

    def all_findings(self) -> tuple[Finding, ...]:
        """Host findings and every GPU's own: what the exit code and a fleet judge."""
        return self.findings + tuple(f for g in self.gpus for f in g.findings)

    def finding(self, check_id: CheckId) -> Finding | None:
        return next((f for f in self.findings if f.id == check_id), None)


def build_report(facts: Facts, plan: Plan, findings: list[Finding], **kw: Any) -> Report:
    return Report(facts=facts, plan=plan, findings=tuple(findings),
                  created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"), **kw)


def report_to_dict(report: Report) -> dict:
    data = to_jsonable(report)
    data = {"schema": data.pop("schema"), **data}
    return data


def report_to_json(report: Report) -> str:
    return undecodable_escaped(strict_json(report_to_dict(report), indent=2, ensure_ascii=False))


@dataclass(frozen=True)
class Loaded:
    facts: Facts
    plan: Plan
    note: str
    report: Report | None  # present when the file was a whole report


def parse_document(data: Any, name: str) -> Loaded:
    if not isinstance(data, dict):
        raise ReplayError(f"{name}: not a v100-doctor report (the top level is not a JSON object)")
    schema = data.get("schema")
    if not isinstance(schema, str) or not (schema.startswith(SCHEMA_FAMILY) or schema.startswith("v100-doctor/facts/")):
        raise ReplayError(f"{name}: not a v100-doctor report (no \"schema\": \"{SCHEMA}\" field)")
    version = schema.rsplit("/", 1)[-1]
    if version != "1":
        raise ReplayError(f"{name}: schema {schema} is newer than this doctor understands ({SCHEMA}); "
                          "upgrade: pip install -U v100-doctor")
    try:
        facts = from_jsonable(Facts, data.get("facts"), "$.facts")
        plan = from_jsonable(Plan, data.get("plan", {}), "$.plan")
        report = None
        if schema.startswith(SCHEMA_FAMILY) and "findings" in data:
            report = from_jsonable(Report, data, "$")
    except LoadError as exc:
        raise ReplayError(f"{name}: the report is damaged: {exc}") from None

    if why := plan_problem(plan):
        raise ReplayError(f"{name}: the report's plan is damaged: {why}")
    facts = scrub(facts)  # NaN, negative memory, "banana" capabilities become unknown, with the reason
    return Loaded(facts=facts, plan=plan, note=str(data.get("note", "")), report=report)

