"""Plain text for terminals and logs: summary first, evidence behind -v (like flutter doctor).

Prose wraps at `width` on whole words (the terminal's width on a terminal: doctor/cli/output.py text_width);
commands stay one line each, so what is pasted is what was printed.
"""

from __future__ import annotations

from doctor.model.findings import Finding, Status
from doctor.model.report import Report
from doctor.render import batched_text, common
from doctor.render.common import WIDTH, wrap
from doctor.render.panels import no_gpu_hint, no_probe_hint
from doctor.render.samples import render_series
from doctor.render.verdict_text import report_probe_lines


def render_text(report: Report, verbose: bool = False, width: int = WIDTH) -> str:
    lines = wrap(f"v100-doctor {report.doctor_version} — {common.source_line(report)}", "", "  ", width)
    lines += wrap(common.machine_line(report), "", "  ", width)
    lines += (wrap(engine, "", "  ", width) if (engine := common.engine_line(report)) else []) + [""]
    for f in report.findings:
        lines += _finding_lines(report, f, verbose, width, "")
    if report.gpus:  # several GPUs: each judged on its own, worst first; -v lists each GPU's checks
        lines += ["", f"GPUs judged ({len(report.gpus)}, NVML numbers, worst first):"]
        lines += [w for l in common.gpu_lines(report) for w in wrap(l, "  ", "    ", width)]
        for g in report.gpus if verbose else ():
            lines += [w for f in g.findings for w in wrap(f"{f.id}: {f.summary}", f"    GPU {g.index} [{common.SYMBOLS[f.status]}] ",
                                                            "      ", width)]
        for g, findings in common.gpus_needing_care(report):  # each other GPU that fails or warns: its lines and fix
            lines += ["", f"{common.gpu_label(report, g)}:"]
            for f in findings:
                lines += _finding_lines(report, f, verbose, width, "  ")
    for extra in report.errors:  # the run was cut short: the report is partial, not a crashed check
        lines += wrap(f"partial report: {extra}", "[!] ", "    ", width)
    if report.probe is not None or report.verdict is not None:  # the timed probe and its verdict
        lines += [""] + report_probe_lines(report, verbose, width)
    if section := batched_text.text_lines(report, verbose, width):  # 1, 2, 4, 8 ... users: an estimate
        lines += [""] + section
    if report.facts.samples is not None:  # watch / probe: what the sampler saw, raw samples behind -v
        lines += [""] + render_series(report.facts.samples, verbose)
    if script := common.route_script(report):
        lines += ["", common.route_heading(report) + ":"] + [f"  {c}" if c else "" for c in script]
    lines += [""] + wrap(f"Summary: {common.summary_counts(report)}.", "", "  ", width)
    if hint := no_gpu_hint(report):  # the TUI's first hint on a machine without a GPU, in the same words
        lines += wrap(hint, "", "  ", width)
    if hint := no_probe_hint(report):  # a live run without --model: why there is no verdict, and what to add
        lines += wrap(hint, "", "  ", width)
    return "\n".join(lines) + "\n"


def _finding_lines(report: Report, f: Finding, verbose: bool, width: int, indent: str) -> list[str]:
    """One finding: its line, then (failing or warning, or -v) its evidence, fix and commands."""
    lines = wrap(f"{f.id}: {f.summary}", f"{indent}[{common.SYMBOLS[f.status]}] ", indent + "    ", width)
    show_detail = verbose or f.status in (Status.WARN, Status.FAIL, Status.ERROR)
    if verbose and f.evidence:
        for k, v in common.evidence_items(f.evidence):
            lines += wrap(f"{k}: {v}", indent + "      ", indent + "        ", width)
    if show_detail and f.fix:
        lines += wrap(f.fix, indent + "    fix: ", indent + "         ", width)
    if show_detail and common.quoted_by_route(report, f.commands):
        lines.append(indent + "      (commands: \"Do this, in this order\", below)")
    elif show_detail and f.commands:
        lines += [f"{indent}      $ {c}" if not c.startswith("#") else f"{indent}      {c}" for c in f.commands]
    return lines
