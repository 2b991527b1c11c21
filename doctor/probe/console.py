"""Probe progress on stderr for the plain CLI: one line per phase, a live counter on a terminal.

A subscriber of the run's typed probe events (doctor/model/events.py), as the TUI's panels are.
stdout stays reserved for the report (text, Markdown or JSON), so `--json` output is clean.
"""

from __future__ import annotations

import sys
from typing import IO

from doctor.model.events import ProbeCancelled, ProbeEvent, ProbeFailed, ProbePhase, ProbeProgress, ProbeRate, ProbeTimedOut


class ConsoleProgress:
    def __init__(self, stream: IO[str] | None = None, live: bool | None = None):
        self.stream = sys.stderr if stream is None else stream  # the stderr of now, not of the module's import
        self.live = self.stream.isatty() if live is None else live
        self._pending = False

    def __call__(self, event: ProbeEvent) -> None:
        if isinstance(event, ProbePhase) and event.phase not in ("start", "done"):
            self._line(f"probe: {event.message or event.phase}")
        elif isinstance(event, ProbeProgress) and self.live:
            counted = f"{event.done:g}/{event.total:g}" if event.total else f"{event.done:g}"
            self.stream.write("\r" + f"  {counted} {event.unit}".ljust(40))
            self.stream.flush()
            self._pending = True
        elif isinstance(event, ProbeRate) and event.phase == "decode":
            self._line(f"  run {event.run}: {event.tok_s:.1f} tok/s (CPU/wall {event.cpu_wall or 0:.2f}, "
                       f"{event.faults_per_token or 0:g} page faults/token)")
        elif isinstance(event, ProbeFailed):
            self._line(f"probe: failed in {event.phase}: {event.message}")
        elif isinstance(event, ProbeTimedOut):
            self._line(f"probe: timeout during {event.phase}")
        elif isinstance(event, ProbeCancelled):
            self._line(f"probe: cancelled during {event.phase}")

    def _line(self, text: str) -> None:
        if self._pending:
            self.stream.write("\n")
            self._pending = False
        self.stream.write(text + "\n")
        self.stream.flush()
