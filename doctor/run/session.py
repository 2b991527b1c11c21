"""What one TUI run shows: a live diagnosis, today's checks on recorded facts, or a saved report read-only,
and how the command line's arguments choose it.

Plain data without textual, so the CLI can build it before deciding to import the TUI; it imports
nothing heavy, so that the TUI's first frame does not wait for the checks and the report to load.
The screen gets everything it shows through a Session: it reads no file and gathers nothing itself.
"""

from __future__ import annotations

import argparse
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from doctor.model.plan import Plan

if TYPE_CHECKING:  # kept out of the import path: the first frame is painted before these load
    from checks.base import Check
    from doctor.model.facts import Facts
    from doctor.model.events import ProbeEvent
    from doctor.model.report import Report


@dataclass
class Session:
    plan: Plan = field(default_factory=Plan)
    source: str = "live"  # live | replay:<file> | example:<name>, as in Report.source
    facts: Facts | None = None  # None: gather this machine's facts
    saved: Report | None = None  # a saved report, shown as the user saw it
    note: str = ""
    checks: tuple[Check, ...] | None = None  # None: the whole registry
    torch_timeout_s: float = 20.0  # as GatherOptions: give up on torch's import/CUDA init after this
    fresh: bool = False  # as GatherOptions: import torch again instead of using its cached static facts
    use_cache: bool = True  # as GatherOptions: False with --no-cache
    save_path: str | None = None  # -o FILE: the default target of `s`
    redact: bool = True  # what `s`, `m` and -o write is redacted (doctor/run/output.py shareable); --no-redact: False
    # runs the probe on its worker thread: (report, on_event, cancel) -> the report with probe and verdict;
    # it returns (never raises) when the probe ends, fails or is cancelled. None: the probe is not offered here.
    run_probe: Callable[[Report, Callable[[ProbeEvent], None], threading.Event], Report] | None = None
    no_probe_reason: str = "the probe is not available here"
    auto_probe: bool = False  # start the probe once the checks are done (`--model` given, as the CLI does)
    # the demo's story view: every recorded example, replayed, as (name, report) in story order; () elsewhere
    story: tuple[tuple[str, Report], ...] = ()
    story_start: str | None = None  # the example whose full report opens first (`demo NAME`); None: the story view


def session_from_args(args: argparse.Namespace, checks) -> Session:
    """The Session the command line asks for: a replay (a whole report shown as saved, an example re-checked,
    or recorded facts with today's checks) or this machine live."""
    from doctor.run.options import plan_from_args

    if getattr(args, "story", False):  # `v100-doctor demo` on a terminal
        return story_session(getattr(args, "story_start", None))
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
    from doctor.run.live_probe import probe_arguments

    return Session(plan=plan_from_args(args), checks=checks, save_path=args.output, torch_timeout_s=args.torch_timeout,
                   fresh=args.fresh, use_cache=not getattr(args, "no_cache", False), **probe_arguments(args))


def story_session(start: str | None = None) -> Session:
    """`v100-doctor demo` on a terminal: the story view over every recorded example (today's checks and verdict
    on each), opening on `start`'s full report when one is named."""
    from doctor.run.examples import example_names, replay_example

    story = tuple((name, replay_example(name)) for name in example_names())
    first = dict(story).get(start) if start else None
    shown = first if first is not None else story[0][1]
    return Session(plan=shown.plan, source=shown.source, saved=shown, note=shown.note, story=story,
                   story_start=start if first is not None else None,
                   no_probe_reason="a recorded example is read-only: the probe would measure this machine")


def _example(path: str) -> Report:
    """A recorded example keeps no conclusions: today's checks and verdict on it, as `v100-doctor demo` shows it."""
    from pathlib import Path

    from doctor.run.examples import replay_example

    return replay_example(Path(path).stem, Path(path).parent)
