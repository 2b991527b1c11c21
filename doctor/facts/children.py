"""Every child process the gatherers start, so an interrupt can stop and reap all of them.

The torch child runs in its own session (a Ctrl-C on the terminal does not reach it), so nothing
but the doctor can end it: on SIGINT, SIGTERM or SIGHUP the CLI calls `stop_all()` before it exits.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from contextlib import contextmanager
from typing import Any, Iterator

_LIVE: set[subprocess.Popen] = set()
_LOCK = threading.Lock()


INTERRUPTS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextmanager
def interrupts_held() -> Iterator[None]:
    """Hold SIGINT/SIGTERM/SIGHUP while a child starts: a signal landing after the fork but before its
    owner records it would orphan it. A held signal is raised again on leaving, once the child is known.
    Python runs handlers in the main thread only, so elsewhere this holds nothing. The CLI's long-lived
    children (the torch child, the probe worker) start inside it; the TUI's hang-up guard is left alone."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    old = {s: h for s in INTERRUPTS if (h := signal.getsignal(s)) is not None}
    for s in old:
        signal.signal(s, lambda signum, _frame: pending.append(signum))
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        if pending:
            signal.raise_signal(pending[0])


@contextmanager
def interrupts_ignored(active: bool = True) -> Iterator[None]:
    """After the first interrupt, while the partial report is written: a second must not cut it short.
    The handlers come back afterwards (an ignored signal would be inherited by every later child)."""
    if not active or threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {s: h for s in INTERRUPTS if (h := signal.getsignal(s)) is not None}
    for s in old:
        signal.signal(s, signal.SIG_IGN)
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


class Closed(RuntimeError):
    """No child may start: the process is ending (a hang-up's deadline has stopped every child for good)."""


_closed = False


def spawn(cmd: list[str], **kwargs: Any) -> subprocess.Popen:
    """Popen in a session of its own, registered until `reap`; text output decoded with U+FFFD for bad bytes.
    Started and registered under the lock, so stop_all sees every child that exists (a child forked while
    stop_all ran, and registered after it, lived on in a session of its own once the doctor had ended)."""
    kwargs.setdefault("start_new_session", True)
    if kwargs.get("text"):
        kwargs.update(encoding="utf-8", errors="replace")
        kwargs.pop("text")
    with _LOCK:
        if _closed:
            raise Closed(f"not starting {os.path.basename(cmd[0])}: the doctor is ending")
        proc = subprocess.Popen(cmd, **kwargs)
        _LIVE.add(proc)
    return proc


def stop(proc: subprocess.Popen) -> None:
    """SIGKILL the child's whole process group and reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    reap(proc)


def reap(proc: subprocess.Popen) -> None:
    with _LOCK:
        _LIVE.discard(proc)


def stop_all(final: bool = False) -> int:
    """Stop every registered child still running; how many there were. final: the process ends now, so no child
    may start after this (spawn raises Closed)."""
    global _closed
    with _LOCK:
        _closed = _closed or final
        live = list(_LIVE)
    for proc in live:
        stop(proc)
    return len(live)


def run_output(cmd: list[str], timeout_s: float) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of a short command, killed with its group at the timeout (TimeoutError)."""
    proc = spawn(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        stop(proc)
        raise TimeoutError(f"{os.path.basename(cmd[0])} did not answer within {timeout_s:g} s") from None
    reap(proc)
    return proc.returncode, out, err
