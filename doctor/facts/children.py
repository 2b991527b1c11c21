"""Every child process the gatherers start, so an interrupt can stop and reap all of them.

The torch child runs in its own session (a Ctrl-C on the terminal does not reach it), so nothing
but the doctor can end it: on SIGINT, SIGTERM or SIGHUP the CLI calls `stop_all()` before it exits.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading

_LIVE: set[subprocess.Popen] = set()
_LOCK = threading.Lock()


def spawn(cmd: list[str], **kwargs) -> subprocess.Popen:
    """Popen in a session of its own, registered until `reap`; text output decoded with U+FFFD for bad bytes."""
    kwargs.setdefault("start_new_session", True)
    if kwargs.get("text"):
        kwargs.update(encoding="utf-8", errors="replace")
        kwargs.pop("text")
    proc = subprocess.Popen(cmd, **kwargs)
    with _LOCK:
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


def stop_all() -> int:
    """Stop every registered child still running; how many there were."""
    with _LOCK:
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
