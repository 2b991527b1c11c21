"""Markdown ready to paste into a GitHub issue: a table up front, details in a collapsible block."""

from __future__ import annotations

from doctor.model.report import Report
from doctor.render.common import (
    SYMBOLS,
    engine_line,
    evidence_items,
    gpu_label,
    gpu_lines,
    gpus_needing_care,
    machine_line,
    quoted_by_route,
    route_heading,
    route_script,
    source_line,
    summary_counts,
)
from doctor.render.panels import no_probe_hint
from doctor.render.samples import render_series
from doctor.render.untrusted import md_fence, md_text
from doctor.render.verdict_text import report_probe_lines


def _cell(text: str) -> str:
    return md_text(text)


def render_markdown(report: Report) -> str:
    out = [f"### v100-doctor {report.doctor_version}: {summary_counts(report)}", "",
           f"_{md_text(source_line(report))}_ — {md_text(machine_line(report))}", "",
           *([md_text(engine), ""] if (engine := engine_line(report)) else []),
           "| | check | result |", "|---|---|---|"]
    out += [f"| {SYMBOLS[f.status]} | `{f.id}` | {_cell(f.summary)} |" for f in report.findings]
    if report.gpus:  # several GPUs: one line each, worst first
        out += ["", f"**GPUs judged** ({len(report.gpus)}, NVML numbers, worst first):", ""]
        out += [f"- {_cell(l)}" for l in gpu_lines(report)]
        for g, findings in gpus_needing_care(report):  # each other GPU that fails or warns: its rows, fixes below
            out += ["", f"**{_cell(gpu_label(report, g))}**", "", "| | check | result |", "|---|---|---|"]
            out += [f"| {SYMBOLS[f.status]} | `{f.id}` | {_cell(f.summary)} |" for f in findings]
            fixes = dict.fromkeys(f.fix for f in findings if f.fix)  # one line per fix, in the order of the rows
            out += [""] + [f"**Fix:** {_cell(fix)}" for fix in fixes] if fixes else []
    if report.probe is not None or report.verdict is not None:  # the timed probe and its verdict, as measured
        out += ["", *md_fence(report_probe_lines(report), "text")]
    elif hint := no_probe_hint(report):  # a live run without --model: why there is no verdict, and what to add
        out += ["", md_text(hint)]
    out += [f"> **Partial report:** {_cell(e)}" for e in report.errors]
    out += ["", "<details><summary>Evidence and fixes</summary>", ""]
    cared = [(f, f"{gpu_label(report, g)}: ") for g, findings in gpus_needing_care(report) for f in findings]
    for f, whose in [(f, "") for f in report.findings] + cared:
        out.append(f"#### {_cell(whose)}`{f.id}` — {f.status.value}")
        out.append("")
        out += [f"- **{k}**: {_cell(v)}" for k, v in evidence_items(f.evidence)]
        if f.fix:
            out += ["", f"**Fix:** {md_text(f.fix)}"]
        if quoted_by_route(report, f.commands):
            out += ["", "_Commands: see **Do this, in this order** below._"]
        elif f.commands:
            out += ["", *md_fence(f.commands, "sh")]
        out.append("")
    out += ["</details>", ""]
    if script := route_script(report):
        out += [f"#### {route_heading(report)}", "", *md_fence(script, "sh"), ""]
    if report.facts.samples is not None:
        out += ["<details><summary>Samples</summary>", "", *md_fence(render_series(report.facts.samples), "text"),
                "", "</details>", ""]
    return "\n".join(out)
