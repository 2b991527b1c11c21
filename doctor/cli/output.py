"""Where a finished report goes: stdout in the chosen format, the -o file, and the exit code."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from typing import TYPE_CHECKING, Any, Callable, Iterable, TextIO

from doctor.facts.children import interrupts_ignored
from doctor.facts.files.atomic_write import write_whole
from doctor.model.errors import OutputFailed, UsageError
from doctor.model.exitcodes import ExitCode, interrupt_exit
from doctor.model.findings import Status
from doctor.render.untrusted import json_for_terminal, visible
from doctor.run.share import shared_report

if TYPE_CHECKING:
    from doctor.model.events import ProbeEvent, RunEvent
    from doctor.model.report import Report

MIN_TEXT_WIDTH = 40  # a terminal narrower than this still gets lines of 40 columns: words of a fix stay together


def exit_code_for(report: Report, asked: Iterable[str] | None = None) -> ExitCode:
    """The worst over every finding; `asked` (--check IDs): a run in which one of them was skipped never says 0."""
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
    if asked and not_run(report, asked):
        return ExitCode.NOT_RUN
    return ExitCode.OK


def not_run(report: Report, asked: Iterable[str]) -> list[str]:
    """The checks asked for by id that did not run: skipped on every GPU, or absent from the report."""
    ran = {str(f.id) for f in report.all_findings() if f.status is not Status.SKIP}
    return [str(c) for c in asked if str(c) not in ran]


class ReportOutputs:
    """The plain CLI's subscriber of a Run (doctor/run/run.py): the probe's progress on stderr while it runs, then
    the finished report on stdout in the chosen format, in -o and --prometheus; `code` is the exit code."""

    def __init__(self, args: argparse.Namespace, progress: Callable[[ProbeEvent], None] | None = None) -> None:
        from doctor.probe.console import ConsoleProgress  # lazy: the report model and renderers load when a report is written, not for --version or --help

        self.args = args
        self.progress = progress if progress is not None else ConsoleProgress()
        self.code: int | None = None

    def __call__(self, event: RunEvent) -> None:
        from doctor.model.events import (  # lazy: the report model and renderers load when a report is written, not for --version or --help
            ProbeEvent,
            ReportReady,
        )

        if isinstance(event, ReportReady):
            self.code = self.written(event.report)
        elif isinstance(event, ProbeEvent):
            self.progress(event)

    def written(self, report: Report) -> int:
        if report.source.recorded or report.probe is None or report.probe.status != "cancelled":
            return emit(report, self.args)

        with interrupts_ignored():
            emit(report, self.args)
        return interrupt_exit(report.probe.interrupted_by)


def emit(report: Report, args: argparse.Namespace) -> ExitCode:
    """Write the report where asked, print it in the chosen format, return the exit code."""
    from doctor.model.report import report_to_json  # lazy: the report model and renderers load when a report is written, not for --version or --help

    shared = shared_report(report, not getattr(args, "no_redact", False)) if _shares(args) else report
    if getattr(args, "output", None):
        write_report_file(shared, args.output, redact=False)  # already shareable
    if getattr(args, "prometheus", None):
        write_prometheus_file(report, args.prometheus)
    if args.json:
        sys.stdout.write(json_for_terminal(report_to_json(shared)) + "\n")
    elif args.markdown:
        from doctor.render.markdown import render_markdown  # lazy: the report model and renderers load when a report is written, not for --version or --help

        sys.stdout.write(render_markdown(shared))
    else:
        from doctor.render.text import render_text  # lazy: the report model and renderers load when a report is written, not for --version or --help

        sys.stdout.write(visible(render_text(report, verbose=args.verbose, width=text_width(sys.stdout))))
    for f in report.findings:
        if f.evidence.get("input_error"):
            print(f"v100-doctor: error: {f.evidence['input_error']}", file=sys.stderr)
    code = exit_code_for(report, getattr(args, "only", None))
    if code is ExitCode.NOT_RUN:
        print(f"v100-doctor: --check {', '.join(not_run(report, args.only))} did not run (skipped): exit "
              f"{int(code)}, not 0", file=sys.stderr)
    return code


def _shares(args: argparse.Namespace) -> bool:
    """A JSON, Markdown or -o report is made to be sent; plain text on the terminal is for the person running it."""
    return bool(getattr(args, "output", None) or args.json or args.markdown)


def write_report_file(report: Report, path: str, redact: bool = True) -> None:
    from doctor.model.report import report_to_json  # lazy: the report model and renderers load when a report is written, not for --version or --help

    write_report_text(report_to_json(shared_report(report, redact)) + "\n", path)


def write_report_text(text: str, path: str) -> None:
    """A report's JSON to -o FILE, whole or not at all, said on stderr; a path that cannot be written is the user's."""
    try:
        write_whole(path, text)
    except OSError as exc:
        raise UsageError(f"cannot write the report to {path}: {exc.strerror}") from None
    print(f"v100-doctor: report written to {path}", file=sys.stderr)


def write_prometheus_file(report: Report, path: str) -> None:
    """The textfile collector's .prom file, atomically (write_whole): the collector never reads half a file."""
    from doctor.render.prometheus import render_prometheus  # lazy: only with --prometheus

    text = render_prometheus(report, exit_code_for(report))
    try:
        write_whole(path, text)
    except OSError as exc:
        raise UsageError(f"cannot write the Prometheus file {path}: {exc.strerror}") from None


# What each glyph becomes on a terminal or file whose encoding cannot hold it (LC_ALL=C, latin-1, ascii)
ASCII_GLYPHS = str.maketrans({"✓": "+", "✗": "x", "☠": "!!", "–": "-", "—": "-", "·": "|", "…": "...", "×": "x",
                              "÷": "/", "°": "deg", "→": "->", "≈": "~", "≥": ">=", "≤": "<=", "µ": "u", "⚠": "!",
                              "�": "?", "“": '"', "”": '"', "‘": "'", "’": "'", "•": "*", "│": "|", "─": "-"})


class GlyphFallback:
    """A text stream that writes glyphs its encoding lacks as ASCII, and anything else as a '?'."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        encoding = getattr(stream, "encoding", None) or "ascii"
        try:
            stream.reconfigure(errors="replace")  # type: ignore[attr-defined]  # io.TextIOWrapper has it, TextIO does not; others raise AttributeError, caught below
        except (AttributeError, ValueError):
            pass
        self._encoding = encoding

    def write(self, text: str) -> int:
        try:
            text.encode(self._encoding)
        except UnicodeEncodeError:
            text = text.translate(ASCII_GLYPHS)
        except LookupError:
            pass
        return self._stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _holds_glyphs(stream: TextIO) -> bool:
    try:
        "✓✗☠—·°…".encode(getattr(stream, "encoding", None) or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def prepare_streams() -> None:
    """Make stdout/stderr safe to write whatever the locale: a closed stream becomes /dev/null (stderr) or
    is reported, and an encoding without ✓ or — gets ASCII glyphs instead of a UnicodeEncodeError."""
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process
    if sys.stdout is None:
        print("v100-doctor: note: stdout is closed; only -o FILE (if given) receives the report", file=sys.stderr)
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if not isinstance(stream, GlyphFallback) and not _holds_glyphs(stream):
            setattr(sys, name, GlyphFallback(stream))


def text_width(stream: TextIO) -> int:
    """Plain text wraps at the terminal's width when it goes to one (COLUMNS first, as shutil reads it), and at
    doctor.render.width.WIDTH (100) in a pipe, a file or a log, where no width is known (issue 13)."""
    from doctor.render.width import WIDTH  # lazy: the renderers load when something is written, not for --version or --help

    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError):  # a closed or stand-in stream
        terminal = False
    return max(MIN_TEXT_WIDTH, shutil.get_terminal_size((WIDTH, 24)).columns) if terminal else WIDTH


def flush_stdout() -> None:
    """Flush now, so a full disk is an OutputFailed (exit 3) and not an error Python prints at exit."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputFailed(f"cannot write the output: {exc.strerror or exc}") from None
