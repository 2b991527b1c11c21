"""From the command line's arguments to a running TUI, and back to an exit code.

The CLI imports this module only when stdout and stdin are a terminal, so textual is loaded
only then; everything the TUI shows comes from the same pipeline as the plain-text output.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from doctor.model.exitcodes import ExitCode
from doctor.run.session import session_from_args

if TYPE_CHECKING:
    from doctor.model.report import Report

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
