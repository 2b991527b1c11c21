"""Probe progress on stderr for the plain CLI: one line per phase, a live counter on a terminal.

stdout stays reserved for the report (text, Markdown or JSON), so `--json` output is clean.
"""

from __future__ import annotations

import sys
from typing import IO


class ConsoleProgress:
    def __init__(self, stream: IO[str] = sys.stderr, live: bool | None = None):
        self.stream = stream
        self.live = stream.isatty() if live is None else live
        self._pending = False

    def __call__(self, event: dict) -> None:
        kind = event.get("event")
        if kind == "phase" and event.get("phase") not in ("start", "done"):
            self._line(f"probe: {event.get('message', event.get('phase'))}")
        elif kind == "progress" and self.live:
            total = event.get("total")
            done = event.get("done", 0)
            text = f"  {done:g}/{total:g} {event.get('unit', '')}" if total else f"  {done:g} {event.get('unit', '')}"
            self.stream.write("\r" + text.ljust(40))
            self.stream.flush()
            self._pending = True
        elif kind == "sample" and event.get("phase") == "decode":
            self._line(f"  run {event.get('run')}: {event.get('tok_s', 0):.1f} tok/s (CPU/wall {event.get('cpu_wall', 0):.2f}, "
                       f"{event.get('faults_per_token', 0):g} page faults/token)")
        elif kind == "error":
            self._line(f"probe: failed in {event.get('phase')}: {event.get('message')}")
        elif kind in ("timeout", "cancelled"):
            self._line(f"probe: {kind} during {event.get('phase')}")

    def _line(self, text: str) -> None:
        if self._pending:
            self.stream.write("\n")
            self._pending = False
        self.stream.write(text + "\n")
        self.stream.flush()
