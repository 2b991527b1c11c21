"""Shared bits of the renderers: status symbols and the one-line header about the machine."""

from __future__ import annotations

import textwrap
from collections import Counter

from doctor.model.findings import SEVERITY, Finding, GpuJudgement, Status
from doctor.model.ids import CheckId
from doctor.model.prescription import Prescription
from doctor.model.report import Report
from doctor.model.source import Origin
from doctor.model.unknown import known, show
from doctor.render.width import WIDTH

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


def engine_line(report: Report) -> str:
    """Which engine the checks judged, and why; empty for a report from before issue 35."""
    e = report.engine_in_force
    if e is None:
        return ""
    if e.assumed:  # the engine check speaks for each likely engine only where it ran (there was a card to judge)
        said = "; the engine check says what each likely engine would do on this card" if report.finding(CheckId.ENGINE) else ""
        return f"Engine: {e.why}{said}"
    return f"Judged as {e.engine}: {e.why}"


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


def prescription_script(rx: Prescription | None, gpu: str = "") -> list[str]:
    """One prescription as shell lines: each route a block, each step's why and change as comments; `gpu` names
    the card the route is for when the GPUs of a host need different ones."""
    if rx is None or not rx.routes:
        return []
    out: list[str] = []
    whose = f" for {gpu}" if gpu else ""
    for n, route in enumerate(rx.routes):
        if len(rx.routes) > 1:
            out.append(f"# {'Either' if n == 0 else 'Or'} route {chr(65 + n)}{whose}: {route.name} ({route.cost})")
        else:
            out.append(f"# route{whose}: {route.name} ({route.cost})")
        for i, step in enumerate(route.steps, 1):
            out.append(f"# {i}. {step.changes}: {step.why}")
            if step.action:
                out.append(f"#    {step.action}")
            if step.command:
                out.append(step.command)
        if n < len(rx.routes) - 1:
            out.append("")
    return out


def gpu_label(report: Report, g: GpuJudgement) -> str:
    cuda = f"CUDA {g.cuda_index}" if g.cuda_index is not None else "hidden from CUDA"
    return f"GPU {g.index} {g.name} ({cuda})"


def routes(report: Report) -> list[tuple[str, Prescription]]:
    """(which GPU, route) for each route the machine needs: the host's alone, unnamed, when every GPU judged needs
    that one (or none); else one per GPU whose route differs, each named."""
    shown = report.plan.gpu_index
    main = report.prescription
    others = [(g, g.prescription) for g in report.gpus if g.index != shown and g.prescription is not None
              and g.prescription.routes and g.prescription.routes != (main.routes if main else ())]
    if not others:
        return [("", main)] if main is not None and main.routes else []
    first = next((g for g in report.gpus if g.index == shown), None)
    named = [(gpu_label(report, first) if first else f"GPU {shown}", main)] if main is not None and main.routes else []
    return named + [(gpu_label(report, g), rx) for g, rx in others]


def route_heading(report: Report) -> str:
    """Above the route: what to do on this machine, or (--target-gpu) what the target will need."""
    if report.plan.target_gpu and report.prescription is not None and report.prescription.routes \
            and report.prescription.routes[0].name.endswith("(--target-gpu)"):
        return f"What the target will need (a plan for --target-gpu {report.plan.target_gpu}; nothing to change on this machine)"
    return "Do this, in this order"


def route_script(report: Report) -> list[str]:
    """Every route the machine needs as shell lines, each named by its GPU when the GPUs need different ones."""
    out: list[str] = []
    for gpu, rx in routes(report):
        out += ([""] if out else []) + prescription_script(rx, gpu)
    return out


def worst_per_check(report: Report) -> list[Finding]:
    """One finding per check: the worst of the host's and every GPU's (what summary lines count)."""
    worst: dict[str, Finding] = {}
    for f in report.all_findings():
        key = str(f.id)
        if key not in worst or SEVERITY[f.status] > SEVERITY[worst[key].status]:
            worst[key] = f
    return list(worst.values())


def summary_counts(report: Report) -> str:
    """The summary line's counts: each check once, at its worst over the GPUs judged."""
    counts = counts_line(worst_per_check(report))
    return f"{counts} (each check at its worst over {len(report.gpus)} GPUs)" if report.gpus else counts


def gpus_needing_care(report: Report) -> list[tuple[GpuJudgement, list[Finding]]]:
    """The GPUs other than the one the host's list shows that fail, crash or warn, with those findings: each gets
    its own lines, fix and route in every face."""
    bad = (Status.FAIL, Status.ERROR, Status.WARN)
    return [(g, [f for f in g.findings if f.status in bad]) for g in report.gpus
            if g.index != report.plan.gpu_index and g.status in bad]


def quoted_by_route(report: Report, commands: tuple[str, ...]) -> bool:
    """True when every command of a finding is a line of the route: print it once, at the end."""
    script = set(route_script(report))
    actions = {f"# {s.action}" for _, rx in routes(report) for r in rx.routes for s in r.steps if s.action}
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
