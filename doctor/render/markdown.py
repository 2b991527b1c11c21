"""Markdown ready to paste into a GitHub issue: a table up front, details in a collapsible block."""

from __future__ import annotations

from doctor.model.report import Report
from doctor.render.common import SYMBOLS, counts_line, evidence_items, gpu_lines, machine_line, quoted_by_route, route_script, source_line
from doctor.render.samples import render_series
from doctor.render.verdict_text import report_probe_lines


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(report: Report) -> str:
    out = [f"### v100-doctor {report.doctor_version}: {counts_line(report.findings)}", "",
           f"_{source_line(report)}_ — {machine_line(report)}", "",
           "| | check | result |", "|---|---|---|"]
    out += [f"| {SYMBOLS[f.status]} | `{f.id}` | {_cell(f.summary)} |" for f in report.findings]
    if report.gpus:  # several GPUs: one line each, worst first
        out += ["", f"**GPUs judged** ({len(report.gpus)}, NVML numbers, worst first):", ""]
        out += [f"- {_cell(l)}" for l in gpu_lines(report)]
    if report.probe is not None or report.verdict is not None:  # the timed probe and its verdict, as measured
        out += ["", "```text", *report_probe_lines(report), "```"]
    out += [f"> **Partial report:** {_cell(e)}" for e in report.errors]
    out += ["", "<details><summary>Evidence and fixes</summary>", ""]
    for f in report.findings:
        out.append(f"#### `{f.id}` — {f.status.value}")
        out.append("")
        out += [f"- **{k}**: {_cell(v)}" for k, v in evidence_items(f.evidence)]
        if f.fix:
            out += ["", f"**Fix:** {f.fix}"]
        if quoted_by_route(report, f.commands):
            out += ["", "_Commands: see **Do this, in this order** below._"]
        elif f.commands:
            out += ["", "```sh", *f.commands, "```"]
        out.append("")
    out += ["</details>", ""]
    if script := route_script(report):
        out += ["#### Do this, in this order", "", "```sh", *script, "```", ""]
    if report.facts.samples is not None:
        out += ["<details><summary>Samples</summary>", "", "```text", *render_series(report.facts.samples), "```",
                "", "</details>", ""]
    return "\n".join(out)
