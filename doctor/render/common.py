"""Shared bits of the renderers: status symbols and the one-line header about the machine."""

from __future__ import annotations

import textwrap
from collections import Counter

from doctor.model.findings import Finding, Status
from doctor.model.report import Report
from doctor.model.source import Origin
from doctor.model.unknown import known, show

WIDTH = 100  # plain text in a file, a pipe or a log, and Markdown; on a terminal, the terminal's width

SYMBOLS = {Status.PASS: "✓", Status.WARN: "!", Status.FAIL: "✗", Status.SKIP: "–", Status.ERROR: "☠", Status.INFO: "i"}


def wrap(text: str, first: str, rest: str, width: int = WIDTH) -> list[str]:
    """text in lines of at most `width` columns, whole words only: a flag, a path or a check id is never split
    (one longer than the line stands alone on its line)."""
    return textwrap.wrap(text, width=width, initial_indent=first, subsequent_indent=rest, break_long_words=False,
                         break_on_hyphens=False) or [first.rstrip()]


def source_line(report: Report) -> str:
    """Where the report's facts (and probe) came from, in words: every renderer's first line says it."""
    src = report.source
    if src.origin is Origin.EXAMPLE:
        return f"RECORDED EXAMPLE ({src.name}), not this machine" + (f": {report.note}" if report.note else "")
    if src.origin is Origin.REPLAY:
        if report.probe is not None:
            return f"replayed from {src.name} (facts and probe as recorded there, checks and verdict of today)"
        return f"replayed from {src.name} (facts as recorded there, checks of today)"
    return "this machine, live"


def machine_line(report: Report) -> str:
    f = report.facts
    gpus = ", ".join(f"{show(g.name)} (cc {show(g.compute_capability)})" for g in f.nvml.gpus) or f"no GPU ({f.nvml.reason})"
    t = f.python.torch
    torch = f"torch {t.version} (CUDA {t.cuda})" if known(t.version) else ("torch not installed" if not t.installed else f"torch broken ({t.reason})")
    line = f"{gpus} · driver {show(f.nvml.driver_version)} · {torch} · Python {f.python.version}"
    if report.plan.target_gpu:  # model checks judged a card from the knowledge base, not this machine's
        line += f" · planning for --target-gpu {report.plan.target_gpu} (knowledge-base numbers, not measured)"
    return line


def counts_line(findings: tuple[Finding, ...] | list[Finding]) -> str:
    c = Counter(x.status for x in findings)
    parts = [f"{c[s]} {name}" for s, name in ((Status.FAIL, "failed"), (Status.ERROR, "crashed"),
                                              (Status.WARN, "warning" if c[Status.WARN] == 1 else "warnings"),
                                              (Status.PASS, "passed"), (Status.INFO, "info"), (Status.SKIP, "skipped")) if c[s]]
    return ", ".join(parts) or "no checks ran"


def evidence_items(evidence: dict) -> list[tuple[str, str]]:
    """A finding's evidence as text, the same in every renderer: a fact that was not read is "unknown", never
    `None`; an empty list is "none"."""
    out = []
    for k, v in evidence.items():
        if v is None:
            v = "unknown"
        elif isinstance(v, (list, tuple)) and not v:
            v = "none"
        elif isinstance(v, float):
            v = f"{v:,.2f}".rstrip("0").rstrip(".")
        elif isinstance(v, (list, tuple)):
            v = ", ".join(str(x) for x in v)
        elif isinstance(v, dict):
            v = ", ".join(f"{a}={b}" for a, b in v.items())
        out.append((k, str(v)))
    return out


def route_script(report: Report) -> list[str]:
    """The prescription as shell lines: each route a block, each step's why and change as comments."""
    rx = report.prescription
    if rx is None or not rx.routes:
        return []
    out: list[str] = []
    for n, route in enumerate(rx.routes):
        if len(rx.routes) > 1:
            out.append(f"# {'Either' if n == 0 else 'Or'} route {chr(65 + n)}: {route.name} ({route.cost})")
        else:
            out.append(f"# route: {route.name} ({route.cost})")
        for i, step in enumerate(route.steps, 1):
            out.append(f"# {i}. {step.changes}: {step.why}")
            if step.action:
                out.append(f"#    {step.action}")
            if step.command:
                out.append(step.command)
        if n < len(rx.routes) - 1:
            out.append("")
    return out


def quoted_by_route(report: Report, commands: tuple[str, ...]) -> bool:
    """True when every command of a finding is a line of the route: print it once, at the end."""
    script = set(route_script(report))
    rx = report.prescription
    actions = {f"# {s.action}" for r in (rx.routes if rx else ()) for s in r.steps if s.action}
    return bool(commands) and all(c in script or c in actions for c in commands)


def gpu_lines(report: Report) -> list[str]:
    """One line per GPU judged, worst first (hosts with several GPUs; empty otherwise)."""
    out = []
    for g in report.gpus:
        top = g.top()
        cuda = f"CUDA {g.cuda_index}" if g.cuda_index is not None else "hidden from CUDA"
        gpu = report.facts.gpu(g.index)
        cc = f"cc {show(gpu.compute_capability)}, " if gpu else ""
        what = f"{top.id}: {top.summary}" if top is not None and top.status not in (Status.PASS, Status.INFO, Status.SKIP) \
            else counts_line(g.findings)
        if len(what) > 160:
            what = what[:157] + "…"
        out.append(f"[{SYMBOLS[g.status]}] GPU {g.index} {g.name} ({cc}{cuda}): {what}")
    return out
