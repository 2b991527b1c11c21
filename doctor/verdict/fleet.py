"""Judging a fleet: rows from saved reports (read as plain JSON, fast), causes shared by hosts, slow outliers.

Rows come straight from a report's dict, not through the dataclass loader: 10,000 reports must aggregate in
seconds on two cores. A report's per-GPU findings (`gpus`) give one row per GPU; an older one-GPU report one row.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from dataclasses import replace
from statistics import median
from typing import Any

from doctor.model.fleet import CauseGroup, Fleet, FleetRow, Outlier
from doctor.model.plausible import problem

RANK = {"fail": 6, "error": 5, "unreadable": 4, "warn": 3, "pass": 2, "info": 1, "skip": 0}
OUTLIER_RATIO = 0.8  # below 80 % of the median of the same card and model
OUTLIER_MIN_PEERS = 3  # a median of fewer rows says little
CAUSE_CUT = re.compile(r";| \(")  # the shared head of a summary, before its detail in brackets or after a semicolon
MAX_HEAD = 100


def _known(value: object, default: str = "?") -> str:
    return value if isinstance(value, str) else default


def _worst(findings: list[dict[str, Any]]) -> tuple[str, str, str]:
    """(status, check id, summary) of the first of the worst findings."""
    best: dict[str, Any] | None = None
    for f in findings:
        if best is None or RANK.get(f.get("status", ""), 0) > RANK.get(best.get("status", ""), 0):
            best = f
    if best is None:
        return "skip", "", "no checks ran"
    status = best.get("status", "skip")
    if status in ("pass", "info", "skip"):
        return status, "", ""
    return status, best.get("id", ""), str(best.get("summary", ""))


def file_stem(source: str) -> str:
    name = posixpath.basename(source)
    for suffix in (".tar.gz", ".tgz", ".zip", ".json"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _model_name(doc: dict) -> str:
    path = (doc.get("plan") or {}).get("model_path")
    return posixpath.basename(path.rstrip("/")) if isinstance(path, str) and path else ""


def host_name(doc: dict, source: str) -> str:
    name = ((doc.get("facts") or {}).get("host") or {}).get("hostname")
    return name if isinstance(name, str) and name else file_stem(source)


def _speeds(verdict: dict) -> tuple[float | None, float | None, str]:
    """(measured, ceiling, why not): a report's numbers are input like any other; NaN, 1e308 or "fast" is unknown."""
    out: list[float | None] = []
    why = []
    for name in ("measured_tok_s", "ceiling_tok_s"):
        value = verdict.get(name)
        bad = None if value is None else ("not a number" if isinstance(value, bool) or not isinstance(value, (int, float))
                                          else problem(name, value))
        out.append(None if value is None or bad else float(value))
        if bad:
            why.append(f"recorded {name} {bad}")
    return out[0], out[1], "; ".join(why)


def _gpu_index(value: object) -> int | None:
    """An NVML index from a report: an integer a real host can have, else none."""
    return value if isinstance(value, int) and not isinstance(value, bool) and problem("gpu_index", value) is None else None


def rows_from_report(doc: dict, source: str) -> list[FleetRow]:
    """One row per GPU judged in one saved report (a dict as json.loads gives it)."""
    facts = doc.get("facts") or {}
    nvml = facts.get("nvml") or {}
    gpus = {_gpu_index(g.get("index")): g for g in nvml.get("gpus") or [] if isinstance(g, dict)}
    torch = ((facts.get("python") or {}).get("torch") or {}).get("version")
    common = dict(host=host_name(doc, source), driver=_known(nvml.get("driver_version")),
                  torch=_known(torch, "not installed"), model=_model_name(doc), source=source)
    verdict = doc.get("verdict") or {}
    probed_gpu = _gpu_index((doc.get("plan") or {}).get("gpu_index", 0))
    host_findings = doc.get("findings") or []
    per_gpu = doc.get("gpus") or []
    if per_gpu:
        per_card = {f.get("id") for g in per_gpu for f in g.get("findings") or []}
        host_only = [f for f in host_findings if f.get("id") not in per_card]
        judged = [(_gpu_index(g.get("index")), host_only + list(g.get("findings") or [])) for g in per_gpu]
    else:
        judged = [(probed_gpu if gpus else None, host_findings)]
    rows = []
    for index, findings in judged:
        status, check, cause = _worst(findings)
        measured, ceiling, why = _speeds(verdict if index == probed_gpu and isinstance(verdict, dict) else {})
        rows.append(FleetRow(gpu=index, status=status, top_check=check, top_cause=cause,
                             card=_known((gpus.get(index) or {}).get("name"), "no GPU"),
                             tok_s=measured, ceiling_tok_s=ceiling, speed_unknown=why, **common))
    return sorted(rows, key=lambda r: (-RANK.get(r.status, 0), r.gpu if r.gpu is not None else -1))


def unreadable_row(source: str, reason: str) -> FleetRow:
    return FleetRow(host=posixpath.basename(source), gpu=None, status="unreadable", top_check="", top_cause=reason,
                    card="?", driver="?", torch="?", source=source)


def shared_head(summary: str) -> str:
    return (CAUSE_CUT.split(summary, 1)[0].strip() or summary)[:MAX_HEAD]


def group_causes(rows: list[FleetRow]) -> tuple[CauseGroup, ...]:
    """Hosts that fail or warn for the same reason, most hosts first."""
    hosts: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for r in rows:
        if r.status in ("fail", "error", "warn", "unreadable"):
            hosts[(r.top_check, shared_head(r.top_cause), r.status)].add(r.host)
    groups = [CauseGroup(check=c, cause=cause, status=s, hosts=tuple(sorted(h))) for (c, cause, s), h in hosts.items()]
    return tuple(sorted(groups, key=lambda g: (-len(g.hosts), -RANK.get(g.status, 0), g.check)))


def find_outliers(rows: list[FleetRow]) -> tuple[Outlier, ...]:
    """Rows decoding below OUTLIER_RATIO of the median of their card and model."""
    speeds: dict[tuple[str, str], list[FleetRow]] = defaultdict(list)
    for r in rows:
        if r.tok_s is not None:
            speeds[(r.card, r.model)].append(r)
    out = []
    for (card, model), peers in speeds.items():
        if len(peers) < OUTLIER_MIN_PEERS:
            continue
        mid = median(r.tok_s for r in peers if r.tok_s is not None)  # every peer has one (above)
        out += [Outlier(host=r.host, gpu=r.gpu, card=card, model=model, tok_s=r.tok_s, median_tok_s=mid, peers=len(peers))
                for r in peers if r.tok_s is not None and mid > 0 and r.tok_s < OUTLIER_RATIO * mid]
    return tuple(sorted(out, key=lambda o: o.ratio))


def _distinct_hosts(rows: list[FleetRow]) -> list[FleetRow]:
    """Two reports naming the same hostname (copied images, fixtures) stay two hosts: the file tells them apart."""
    sources: dict[str, set[str]] = defaultdict(set)
    for r in rows:
        sources[r.host].add(r.source)
    shared = {h for h, s in sources.items() if len(s) > 1}
    return [replace(r, host=f"{r.host} ({file_stem(r.source)})") if r.host in shared else r
            for r in rows]


def judge_fleet(rows: list[FleetRow], reports: int) -> Fleet:
    rows = _distinct_hosts(rows)
    ordered = sorted(rows, key=lambda r: (-RANK.get(r.status, 0), r.host, r.gpu if r.gpu is not None else -1))
    return Fleet(rows=tuple(ordered), groups=group_causes(ordered), outliers=find_outliers(ordered), reports=reports,
                 unreadable=sum(r.status == "unreadable" for r in ordered))
