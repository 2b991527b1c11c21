"""Run one protocol-speaking child: per-phase timeouts, clean cancel, no orphan.

The child starts in its own session (process group), so Ctrl-C on the terminal reaches only
the doctor, which then kills the child's whole group (the worker and anything it started:
ninja, nvcc) with SIGTERM, then SIGKILL. Its stderr goes to a log file whose tail explains a
crash. Every ending is an outcome, never an exception: finished, failed, timeout, cancelled.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from doctor.facts.children import interrupts_held, reap, spawn
from doctor.model.ids import FailureKind
from doctor.probe.errors import tail
from doctor.probe.protocol import parse_event

EventSink = Callable[[dict], None]
_EOF = object()

DEFAULT_TIMEOUTS_S: dict[str, float] = {
    "start": 60, "synthetic": 900, "import": 180, "build": 1800, "bandwidth": 120, "load": 900, "unload": 120, "reload": 900,
    "prefill": 300, "warmup": 900, "decode": 900, "streams": 900, "done": 60,
}


@dataclass
class ChildOutcome:
    status: str  # finished | failed | timeout | cancelled | crashed
    result: dict | None = None  # the "result" event
    error: dict | None = None  # the "error" event, or one the runner made up (timeout, crash)
    phase: str = "start"  # the last phase the child announced
    exit_code: int | None = None
    log_tail: str = ""
    events: int = 0
    seconds: float = 0.0
    phase_times: list[tuple[str, float]] = field(default_factory=list)  # (phase, seconds since start) as announced
    signum: int = 0  # the signal that cancelled it (SIGTERM, SIGHUP); 0 for Ctrl-C or a cancel event


def repo_root() -> str:
    return str(Path(__file__).resolve().parents[2])


def child_env(extra: dict[str, str] | None = None, base: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONPATH"] = os.pathsep.join([repo_root()] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.update(extra or {})
    return env


def kill_group(proc: subprocess.Popen, grace_s: float = 3.0) -> None:
    """SIGTERM the child's process group, then SIGKILL whatever is left; reap the child."""
    for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            break
        try:
            proc.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue
    try:  # the leader may be gone while others in its group live on
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if proc.poll() is None:
        proc.wait(timeout=10)


def run_child(cmd: list[str], stdin_text: str = "", *, on_event: EventSink | None = None,
              timeouts: dict[str, float] | None = None, env: dict[str, str] | None = None,
              cancel: threading.Event | None = None, on_phase: Callable[[str, float], None] | None = None) -> ChildOutcome:
    """Start the child, feed it stdin_text, relay its events until it ends or must be stopped."""
    limits = {**DEFAULT_TIMEOUTS_S, **(timeouts or {})}
    log = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
    t0 = time.monotonic()
    lines: queue.Queue = queue.Queue()
    out = ChildOutcome(status="finished")
    phase_start = t0
    proc: subprocess.Popen | None = None
    try:
        # its own session, registered with doctor.facts.children so stop_all() (an interrupt, a closed terminal) ends
        # it; a signal during the start is held until `proc` is known, then raised here, so the except stops it
        with interrupts_held():
            proc = spawn(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True, env=env or child_env())
        threading.Thread(target=_pump, args=(proc, lines), daemon=True).start()
        try:
            assert proc.stdin is not None  # spawned with stdin=PIPE
            if stdin_text:
                proc.stdin.write(stdin_text)
            proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass  # the child died at once; its log says why
        while True:
            if cancel is not None and cancel.is_set():
                raise KeyboardInterrupt
            limit = limits.get(out.phase, 600)
            remaining = phase_start + limit - time.monotonic()
            if remaining <= 0:
                kill_group(proc)
                out.status = "timeout"
                out.error = {"event": "error", "kind": FailureKind.TIMEOUT, "phase": out.phase,
                             "message": f"the probe's {out.phase} phase did not finish within {limit:g} s; it was stopped"}
                _emit(on_event, {"event": "timeout", "phase": out.phase, "limit_s": limit})
                break
            try:
                item = lines.get(timeout=min(0.2, remaining))
            except queue.Empty:
                continue
            if item is _EOF:
                if cancel is not None and cancel.is_set():  # killed from outside after a cancel (children.stop_all)
                    raise KeyboardInterrupt
                break
            event = parse_event(item)
            if event is None:
                continue
            now = time.monotonic()
            event["t_s"] = round(now - t0, 3)
            out.events += 1
            kind = event["event"]
            if kind == "phase":
                out.phase, phase_start = str(event.get("phase", out.phase)), now
                out.phase_times.append((out.phase, event["t_s"]))
                if on_phase:
                    on_phase(out.phase, now)
            elif kind == "result":
                out.result = event
            elif kind == "error":
                out.error = event
            _emit(on_event, event)
    except KeyboardInterrupt as exc:
        if proc is not None:
            kill_group(proc)
        out.status = "cancelled"
        out.signum = int(getattr(exc, "signum", 0) or 0)
        by = f" ({signal.Signals(out.signum).name})" if out.signum else ""
        out.error = {"event": "error", "kind": FailureKind.CANCELLED, "phase": out.phase, "message": f"cancelled during {out.phase}{by}"}
        _emit(on_event, {"event": "cancelled", "phase": out.phase})
    finally:
        if proc is not None:  # None only when Popen itself failed (no such interpreter): that error goes up
            if proc.poll() is None and out.status in ("finished",):
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    kill_group(proc)
            if proc.poll() is None:
                kill_group(proc)
            reap(proc)
            out.exit_code = proc.returncode
        out.seconds = round(time.monotonic() - t0, 3)
        log.seek(0)
        out.log_tail = tail(log.read())
        log.close()
    if out.status == "finished":
        if out.result is not None:
            out.status = "finished"
        elif out.error is not None:
            out.status = "failed"
        else:
            out.status = "crashed"
            how = f"killed by signal {-out.exit_code}" if out.exit_code and out.exit_code < 0 else f"exit code {out.exit_code}"
            last = out.log_tail.strip().splitlines()[-1:] or ["no output"]
            out.error = {"event": "error", "kind": FailureKind.CRASHED, "phase": out.phase,
                         "message": f"the probe worker died during {out.phase} ({how}): {last[0][:300]}"}
    return out


def _pump(proc: subprocess.Popen, lines: queue.Queue) -> None:
    assert proc.stdout is not None  # spawned with stdout=PIPE
    try:
        for line in proc.stdout:
            lines.put(line)
    except (OSError, ValueError):
        pass
    lines.put(_EOF)


def _emit(sink: EventSink | None, event: dict) -> None:
    if sink is None:
        return
    try:
        sink(event)
    except Exception as exc:  # noqa: BLE001 - a broken UI callback must not leave the child running
        print(f"v100-doctor: probe event handler failed: {exc}", file=sys.stderr)
