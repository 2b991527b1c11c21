"""From the command line's arguments to a running TUI, and back to an exit code.

The CLI imports this module only when stdout and stdin are a terminal, so textual is loaded
only then; everything the TUI shows comes from the same pipeline as the plain-text output.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from doctor.model.exitcodes import ExitCode
from doctor.tui.session import Session

if TYPE_CHECKING:
    from doctor.model.report import Report

def session_from_args(args: argparse.Namespace, checks) -> Session:
    from doctor.run.options import plan_from_args

    if args.replay:
        from doctor.facts.replay import load_document

        loaded = load_document(args.replay)
        read_only = "a replay is read-only: the probe would measure this machine, not the one recorded"
        if loaded.report is not None and loaded.report.source.startswith("example:"):
            return Session(plan=loaded.report.plan, source=loaded.report.source, saved=_example(args.replay),
                           note=loaded.note, checks=checks, save_path=args.output, no_probe_reason=read_only)
        if loaded.report is not None:  # a whole report: show it as the user saw it
            return Session(plan=loaded.report.plan, source=f"replay:{args.replay}", saved=loaded.report,
                           note=loaded.note, checks=checks, save_path=args.output, no_probe_reason=read_only)
        return Session(plan=plan_from_args(args, loaded.plan), source=f"replay:{args.replay}", facts=loaded.facts,
                       note=loaded.note, checks=checks, save_path=args.output, no_probe_reason=read_only)
    return Session(plan=plan_from_args(args), checks=checks, save_path=args.output, torch_timeout_s=args.torch_timeout,
                   fresh=args.fresh, use_cache=not getattr(args, "no_cache", False), **probe_arguments(args))


def _example(path: str) -> Report:
    """A recorded example keeps no conclusions: today's checks and verdict on it, as `v100-doctor demo` shows it."""
    from pathlib import Path

    from doctor.run.examples import replay_example

    return replay_example(Path(path).stem, Path(path).parent)


def probe_arguments(args: argparse.Namespace) -> dict:
    """How `p` starts the probe here, or why it cannot."""
    if getattr(args, "no_probe", False):
        return {"no_probe_reason": "the probe is off (--no-probe)"}
    from doctor.run import live_probe

    return live_probe.probe_arguments(args)


def run_tui(args: argparse.Namespace, checks=None) -> int:
    """checks: the selected checks, or None for the CLI's default list (loaded after the first frame)."""
    from doctor.run.output import exit_code_for, write_report_file
    from doctor.tui.app import DoctorApp

    session = session_from_args(args, checks)
    session.redact = not getattr(args, "no_redact", False)
    app = DoctorApp(session)
    report: Report | None = app.run()
    if app.return_code:  # textual has already printed what broke
        print("v100-doctor: internal error in the TUI (a bug; please report it; --no-tui gives plain text)",
              file=sys.stderr)
        return int(ExitCode.INTERNAL)
    if report is None:
        print("v100-doctor: quit before the checks finished; no report", file=sys.stderr)
        return int(ExitCode.INTERRUPTED)  # the user left before the checks finished, as after Ctrl-C
    if args.output and session.saved is None:
        write_report_file(report, args.output, redact=session.redact)
    from doctor.render.common import counts_line

    print(f"v100-doctor: {counts_line(report.findings)} (plain text: v100-doctor --no-tui)", file=sys.stderr)
    return int(exit_code_for(report))
