"""Markdown ready to paste into a GitHub issue: a table up front, details in a collapsible block."""

from __future__ import annotations

from doctor.model.report import Report
from doctor.render import batched_text, common
from doctor.render.panels import no_probe_hint
from doctor.render.samples import render_series
from doctor.render.untrusted import md_fence, md_text
from doctor.render.verdict_text import report_probe_lines


def _cell(text: str) -> str:
    return md_text(text)


def render_markdown(report: Report) -> str:
    out = [f"### v100-doctor {report.doctor_version}: {common.summary_counts(report)}", "",
           f"_{md_text(common.source_line(report))}_ — {md_text(common.machine_line(report))}", "",
           *([md_text(engine), ""] if (engine := common.engine_line(report)) else []),
           "| | check | result |", "|---|---|---|"]
    out += [f"| {common.SYMBOLS[f.status]} | `{f.id}` | {_cell(f.summary)} |" for f in report.findings]
    if report.gpus:  # several GPUs: one line each, worst first
        out += ["", f"**GPUs judged** ({len(report.gpus)}, NVML numbers, worst first):", ""]
        out += [f"- {_cell(l)}" for l in common.gpu_lines(report)]
        for g, findings in common.gpus_needing_care(report):  # each other GPU that fails or warns: its rows, fixes below
            out += ["", f"**{_cell(common.gpu_label(report, g))}**", "", "| | check | result |", "|---|---|---|"]
            out += [f"| {common.SYMBOLS[f.status]} | `{f.id}` | {_cell(f.summary)} |" for f in findings]
            fixes = dict.fromkeys(f.fix for f in findings if f.fix)  # one line per fix, in the order of the rows
            out += [""] + [f"**Fix:** {_cell(fix)}" for fix in fixes] if fixes else []
    if report.probe is not None or report.verdict is not None:  # the timed probe and its verdict, as measured
        out += ["", *md_fence(report_probe_lines(report), "text")]
    elif hint := no_probe_hint(report):  # a live run without --model: why there is no verdict, and what to add
        out += ["", md_text(hint)]
    if section := batched_text.markdown_lines(report):  # 1, 2, 4, 8 ... users: an estimate
        out += ["", *section]
    out += [f"> **Partial report:** {_cell(e)}" for e in report.errors]
    out += ["", "<details><summary>Evidence and fixes</summary>", ""]
    cared = [(f, f"{common.gpu_label(report, g)}: ") for g, findings in common.gpus_needing_care(report) for f in findings]
    for f, whose in [(f, "") for f in report.findings] + cared:
        out.append(f"#### {_cell(whose)}`{f.id}` — {f.status.value}")
        out.append("")
        out += [f"- **{k}**: {_cell(v)}" for k, v in common.evidence_items(f.evidence)]
        if f.fix:
            out += ["", f"**Fix:** {md_text(f.fix)}"]
        if common.quoted_by_route(report, f.commands):
            out += ["", "_Commands: see **Do this, in this order** below._"]
        elif f.commands:
            out += ["", *md_fence(f.commands, "sh")]
        out.append("")
    out += ["</details>", ""]
    if script := common.route_script(report):
        out += [f"#### {common.route_heading(report)}", "", *md_fence(script, "sh"), ""]
    if report.facts.samples is not None:
        out += ["<details><summary>Samples</summary>", "", *md_fence(render_series(report.facts.samples), "text"),
                "", "</details>", ""]
    return "\n".join(out)
