"""What one TUI run shows: a live diagnosis, today's checks on recorded facts, or a saved report read-only.

Plain data without textual, so the CLI can build it before deciding to import the TUI; it imports
nothing heavy, so that the TUI's first frame does not wait for the checks and the report to load.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from doctor.model.plan import Plan

if TYPE_CHECKING:  # kept out of the import path: the first frame is painted before these load
    from checks.base import Check
    from doctor.model.facts import Facts
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
    run_probe: Callable[[Report, Callable[[dict], None], threading.Event], Report] | None = None
    no_probe_reason: str = "the probe is not available here"
    auto_probe: bool = False  # start the probe once the checks are done (`--model` given, as the CLI does)

