"""Where a finished report goes: stdout in the chosen format, the -o file, and the exit code."""

from __future__ import annotations

import sys

from doctor.model.errors import UsageError
from doctor.model.exitcodes import ExitCode
from doctor.model.findings import Status


def exit_code_for(report) -> ExitCode:
    every = report.all_findings()  # host findings and each GPU's: the worst over the GPUs judged
    statuses = {f.status for f in every}
    if any(f.evidence.get("input_error") for f in every):  # e.g. --model names nothing
        return ExitCode.USAGE
    if Status.FAIL in statuses:
        return ExitCode.FAILURES
    if Status.ERROR in statuses or report.errors:
        return ExitCode.INTERNAL
    if Status.WARN in statuses:
        return ExitCode.WARNINGS
    return ExitCode.OK


def emit(report, args) -> ExitCode:
    """Write the report where asked, print it in the chosen format, return the exit code."""
    from doctor.model.report import report_to_json

    if getattr(args, "output", None):
        write_report_file(report, args.output)
    if getattr(args, "prometheus", None):
        write_prometheus_file(report, args.prometheus)
    if args.json:
        sys.stdout.write(report_to_json(report) + "\n")
    elif args.markdown:
        from doctor.render.markdown import render_markdown

        sys.stdout.write(render_markdown(report))
    else:
        from doctor.render.text import render_text

        sys.stdout.write(render_text(report, verbose=args.verbose))
    for f in report.findings:
        if f.evidence.get("input_error"):
            print(f"v100-doctor: error: {f.evidence['input_error']}", file=sys.stderr)
    return exit_code_for(report)


def write_report_file(report, path: str) -> None:
    from doctor.model.report import report_to_json

    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(report_to_json(report) + "\n")
    except OSError as exc:
        raise UsageError(f"cannot write the report to {path}: {exc.strerror}") from None
    print(f"v100-doctor: report written to {path}", file=sys.stderr)


def write_prometheus_file(report, path: str) -> None:
    """The textfile collector's .prom file, atomically: a temporary file beside it, then a rename."""
    import os
    import tempfile

    from doctor.render.prometheus import render_prometheus

    text = render_prometheus(report, exit_code_for(report))
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".v100-doctor-", suffix=".prom.tmp", dir=folder)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError as exc:
        raise UsageError(f"cannot write the Prometheus file {path}: {exc.strerror}") from None
