"""From the command line's arguments to a running TUI, and back to an exit code.

The CLI imports this module only when stdout and stdin are a terminal, so textual is loaded
only then; everything the TUI shows comes from the same pipeline as the plain-text output.
"""

from __future__ import annotations

import argparse
import signal
import sys
from typing import TYPE_CHECKING

from doctor.cli.hangup import HangupGuard, hangup_guard
from doctor.cli.options import run_from_args
from doctor.cli.output import exit_code_for, write_report_file
from doctor.model.errors import UsageError
from doctor.model.exitcodes import ExitCode
from doctor.run.live_probe import probe_arguments
from doctor.run.session import Session, story_session

if TYPE_CHECKING:
    from checks.base import Check
    from doctor.model.report import Report
    from doctor.tui.app import DoctorApp


def run_tui(args: argparse.Namespace, checks: tuple[Check, ...] | None = None) -> int:
    """checks: the selected checks, or None for the CLI's default list (loaded after the first frame).

    From before textual loads until the last line is printed, SIGHUP (the terminal went away) and SIGTERM end
    the run within doctor.cli.hangup's deadline, with -o written and no child left (issue 13)."""
    with hangup_guard() as guard:
        from doctor.tui.app import DoctorApp  # lazy: textual (80 ms) loads only when a screen opens (demo --no-tui imports this module too)

        session = session_from_args(args, checks)
        app = DoctorApp(session)

        def write_output() -> None:
            if not args.output or session.story:
                return
            report = app.report
            if report is None:  # cut short (a signal, or quit/Ctrl-C before the checks finished): what is known,
                from doctor.cli.interrupted import interrupted_report  # lazy: loaded once the check list is drawn (below)

                report = interrupted_report(session.plan, guard.signum or signal.SIGINT, session.checks)  # the rest unknown
            write_report_file(report, args.output, redact=session.redact)

        failed: list[UsageError] = []

        def write_before_exit() -> None:
            """-o from the app's quit, while the screen is still up (a terminal closed a moment after it leaves
            cannot lose it); a write error is raised after the screen, as the CLI's other input errors."""
            try:
                guard.say_last_words()
            except UsageError as exc:
                failed.append(exc)

        app.before_exit = write_before_exit
        app.after_first_frame = _load_interrupted_report
        guard.on_signal(app.hang_up)
        guard.last_words(write_output)
        report: Report | None = None
        try:
            try:
                report = app.run() if guard.signum is None else None
            except BaseException:  # a screen torn down by the hang-up (termios.error, EIO on a dead terminal)
                if not guard.hang_up_if_gone():
                    raise
                report = app.report
            if failed and guard.signum is None:
                raise failed[0]
            try:
                code = _after_the_screen(app, report, guard, getattr(args, "only", None))
            except OSError:  # the terminal went away while we said goodbye
                if not guard.hang_up_if_gone():
                    raise
        finally:
            guard.say_last_words()  # -o, once, whichever way the run ends (a no-op when already written)
        return code if guard.signum is None else guard.end_now()


def _load_interrupted_report() -> None:
    """The report a quit before the checks finished writes to -o needs the pipeline and gathering (0.1 s of imports):
    loaded on the main thread once the check list is on the terminal (the worker has imported the pipeline by then),
    so neither the first frame nor the list waits for it, and a later quit finds it loaded."""
    import doctor.cli.interrupted  # noqa: F401  # lazy: after the first frame and the check list (issue 29)


def _after_the_screen(app: DoctorApp, report: Report | None, guard: HangupGuard, asked: list[str] | None = None) -> int:
    """-o written (once, whoever is first: this or the guard), one line on stderr, the exit code. The demo's story
    exits as its help says, whichever stage was on screen at the quit: plain `demo` 0, `demo NAME` as NAME's replay."""
    if guard.signum is None and app.return_code:  # textual has already printed what broke
        print("v100-doctor: internal error in the TUI (a bug; please report it; --no-tui gives plain text)",
              file=sys.stderr)
        return int(ExitCode.INTERNAL)
    guard.say_last_words()
    if guard.signum is None and report is None:
        print("v100-doctor: quit before the checks finished" + (" (-o holds what was read, the rest unknown)"
              if getattr(app.session, "save_path", None) else "; no report"), file=sys.stderr)
        return int(ExitCode.INTERRUPTED)  # the user left before the checks finished, as after Ctrl-C
    if guard.signum is not None:  # the terminal may be gone: the report file and the exit code, nothing printed
        return 128 + guard.signum  # (run_tui then ends the process at once)
    assert report is not None  # no signal and no report returned above
    story = dict(app.session.story)
    if story:
        start = app.session.story_start
        report = story.get(start) if start else None
        if report is None:
            return int(ExitCode.OK)

    from doctor.render.common import summary_counts  # lazy: the report model's renderer loads after the screen, not before its first frame

    print(f"v100-doctor: {summary_counts(report)} (plain text: v100-doctor --no-tui)", file=sys.stderr)
    return int(exit_code_for(report, asked))


def session_from_args(args: argparse.Namespace, checks: tuple[Check, ...] | None) -> Session:
    """The Session the command line asks for: the story (`demo` on a terminal), or the one Run of the flags
    (a replay is read-only: its probe was measured on the machine recorded, `p` would measure this one)."""
    redact = not getattr(args, "no_redact", False)
    if getattr(args, "story", False):  # `v100-doctor demo` on a terminal
        return story_session(getattr(args, "story_start", None), redact)
    run = run_from_args(args, checks)
    if not run.live:
        return Session(run=run, save_path=args.output, redact=redact,
                       no_probe_reason="a replay is read-only: the probe would measure this machine, not the one recorded")

    return Session(run=run, save_path=args.output, redact=redact, **probe_arguments(args))
