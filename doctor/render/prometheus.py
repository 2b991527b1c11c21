"""The node_exporter textfile-collector format: one gauge per finding status per GPU, the probed speed, the version.

node_exporter reads every *.prom file in its --collector.textfile.directory; the caller writes this text
atomically (a temporary file in the same folder, then a rename) so a scrape never sees half a file.
"""

from __future__ import annotations

from doctor.model.findings import Status
from doctor.model.report import Report

STATUSES = tuple(s.value for s in Status)


def _label(value: str) -> str:
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(**kw: str) -> str:
    return "{" + ",".join(f'{k}="{_label(v)}"' for k, v in kw.items()) + "}"


def _per_gpu(report: Report) -> list[tuple[str, tuple]]:
    """(gpu label, findings): each GPU judged, or the one GPU of the host-wide list; host-only checks get gpu=""."""
    if report.gpus:
        per_card = {f.id for g in report.gpus for f in g.findings}
        host = tuple(f for f in report.findings if f.id not in per_card)
        return [("", host)] + [(str(g.index), g.findings) for g in report.gpus]
    gpu = report.facts.gpu(report.plan.gpu_index)
    return [(str(report.plan.gpu_index) if gpu else "", report.findings)]


def render_prometheus(report: Report, exit_code: int) -> str:
    host = report.facts.host.hostname if isinstance(report.facts.host.hostname, str) else ""
    lines = ["# HELP v100_doctor_info The doctor that wrote this file (value 1).", "# TYPE v100_doctor_info gauge",
             f"v100_doctor_info{_labels(version=report.doctor_version, host=host)} 1",
             "# HELP v100_doctor_check_status 1 for the status each check gave on each GPU, 0 for the others.",
             "# TYPE v100_doctor_check_status gauge"]
    for gpu, findings in _per_gpu(report):
        for f in findings:
            lines += [f"v100_doctor_check_status{_labels(gpu=gpu, check=f.id, status=s)} {int(f.status.value == s)}"
                      for s in STATUSES]
    lines += ["# HELP v100_doctor_exit_code The doctor's exit code (0 ok, 1 warnings, 2 failures, 3 input, 4 bug).",
              "# TYPE v100_doctor_exit_code gauge", f"v100_doctor_exit_code {int(exit_code)}"]
    if report.verdict is not None:
        gpu = _labels(gpu=str(report.plan.gpu_index))
        lines += ["# HELP v100_doctor_decode_tokens_per_second Decode speed the probe measured.",
                  "# TYPE v100_doctor_decode_tokens_per_second gauge",
                  f"v100_doctor_decode_tokens_per_second{gpu} {report.verdict.measured_tok_s:.6g}",
                  "# HELP v100_doctor_decode_ceiling_tokens_per_second Bandwidth / bytes read per token.",
                  "# TYPE v100_doctor_decode_ceiling_tokens_per_second gauge",
                  f"v100_doctor_decode_ceiling_tokens_per_second{gpu} {report.verdict.ceiling_tok_s:.6g}"]
    return "\n".join(lines) + "\n"
