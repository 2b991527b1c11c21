"""What one TUI run shows: the Run it subscribes to (this machine live, or a saved file or example replayed:
today's checks on its facts, its probe kept as recorded), the demo's story, and what `p` and `s` may do.
The command line chooses it from its arguments (doctor/cli/tui.py session_from_args).

Plain, immutable data without textual, so the CLI can build it before deciding to import the TUI; it imports
nothing heavy, so that the TUI's first frame does not wait for the checks and the report to load.
The screen gets everything it shows through the Session's Run: it reads no file and gathers nothing itself.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from doctor.facts.files.atomic_write import write_whole
from doctor.facts.source import base_plan
from doctor.model.plan import Plan
from doctor.model.source import BundledExample
from doctor.run.run import Run

if TYPE_CHECKING:  # kept out of the import path: the first frame is painted before these load
    from checks.base import Check
    from doctor.model.events import ProbeEvent
    from doctor.model.report import Report


@dataclass(frozen=True)
class Session:
    run: Run = Run()  # what the screen shows, and what `r` runs again
    save_path: str | None = None  # -o FILE: the default target of `s`
    redact: bool = True  # what `s`, `m` and -o write is redacted (doctor/cli/output.py shareable); --no-redact: False
    # runs the probe on its worker thread: (report, on_event, cancel) -> the report with probe and verdict;
    # it returns (never raises) when the probe ends, fails or is cancelled. None: the probe is not offered here.
    run_probe: Callable[[Report, Callable[[ProbeEvent], None], threading.Event], Report] | None = None
    no_probe_reason: str = "the probe is not available here"
    auto_probe: bool = False  # start the probe once the checks are done (`--model` given, as the CLI does)
    # the demo's story view: every recorded example, replayed, as (name, report) in story order; () elsewhere
    story: tuple[tuple[str, Report], ...] = ()
    story_start: str | None = None  # the example whose full report opens first (`demo NAME`); None: the story view

    @property
    def checks(self) -> tuple[Check, ...] | None:
        """The checks the run names (chosen for this plan where the run chooses them by the engine in force)."""
        chosen = self.run.checks
        return chosen(self.plan, None) if callable(chosen) else chosen

    @staticmethod
    def save(path: str | os.PathLike, text: str) -> None:
        """What `s` and `m` write, through the one atomic writer (whole or as it was); OSError if it cannot."""
        write_whole(path, text)

    def shareable(self, report: Report) -> Report:
        """What `s`, `m` and the clipboard get: redacted as -o is (this machine's identities hidden when the report
        was gathered here), unless --no-redact."""
        from doctor.run.share import shared_report  # lazy: redaction loads only when saving, after the first frame

        return shared_report(report, self.redact)

    def stage_run(self, name: str) -> Run:
        """The Run of one story stage (a bundled example), for `r` once that stage is opened."""
        return Run(BundledExample(name))

    @property
    def plan(self) -> Plan:
        """The plan known before the run: the flags over the source's own (a file's is read when the run starts)."""
        return self.run.planned(base_plan(self.run.source))


def story_session(start: str | None = None, redact: bool = True) -> Session:
    """`v100-doctor demo` on a terminal: the story view over every recorded example (today's checks and verdict
    on each), opening on `start`'s full report when one is named."""
    from doctor.run.examples import example_names, replay_example  # lazy: the examples and the report model load only for the demo's story

    story = tuple((name, replay_example(name)) for name in example_names())
    first = start if start in dict(story) else None
    return Session(run=Run(BundledExample(first or story[0][0])), redact=redact, story=story, story_start=first,
                   no_probe_reason="a recorded example is read-only: the probe would measure this machine")
