"""Host-side readings through psutil: watched processes' RSS and CPU, and swap traffic.

Read-only by construction: this module only calls psutil's query methods (memory_info,
cpu_times, name, username, children); it never sends a signal, suspends or changes priority.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from doctor.model.samples import HostSample, ProcessSample, ProcessSeries
from doctor.model.units import MIB


def load_psutil() -> Any:
    try:
        import psutil  # lazy: a missing psutil is a fact; the sampler still reads the GPU

        return psutil
    except Exception:  # noqa: BLE001 - a missing psutil is a fact, the sampler still reads the GPU
        return None


@dataclass
class WatchedProcess:
    pid: int
    parent: int | None = None  # the watched pid this one descends from
    proc: Any = None
    name: str | None = None
    user: str | None = None
    samples: list[ProcessSample] = field(default_factory=list)
    exited_at_s: float | None = None
    unavailable: str = ""
    _last: tuple[float, float] | None = None  # (t_s, cpu seconds) of the previous reading

    def series(self) -> ProcessSeries:
        return ProcessSeries(pid=self.pid, name=self.name, user=self.user, samples=tuple(self.samples),
                             exited_at_s=self.exited_at_s, unavailable=self.unavailable, child_of=self.parent)


MAX_CHILDREN = 16  # a server's workers are read too, up to this many


class HostReader:
    def __init__(self, pids: tuple[int, ...], psutil_module: Any = None):
        self.ps = psutil_module if psutil_module is not None else load_psutil()
        self.requested = tuple(pids)
        self.watched = [self._open(pid) for pid in pids]
        for w in list(self.watched):  # `watch --pid` on a launcher (shell, timeout, vLLM's API server) reads its workers
            for child in self._children(w)[:MAX_CHILDREN]:
                if all(x.pid != child for x in self.watched):
                    self.watched.append(self._open(child, parent=w.pid))
        self._swap_last: tuple[float, int, int] | None = None

    def _children(self, w: WatchedProcess) -> list[int]:
        try:
            return [c.pid for c in w.proc.children(recursive=True)] if w.proc is not None else []
        except Exception:
            return []

    def _open(self, pid: int, parent: int | None = None) -> WatchedProcess:
        w = WatchedProcess(pid=pid, parent=parent)
        if self.ps is None:
            w.unavailable = "psutil is not installed"
            return w
        try:
            w.proc = self.ps.Process(pid)
            w.name = w.proc.name()
            w.user = _safe(w.proc.username)
        except Exception as exc:  # NoSuchProcess, AccessDenied
            w.unavailable = f"{type(exc).__name__}: cannot read pid {pid}"
        return w

    def family(self) -> set[int]:
        """The watched pids and their live descendants (a server's worker processes are 'yours' too)."""
        pids = {w.pid for w in self.watched}
        for w in self.watched:
            if w.parent is None and w.exited_at_s is None:
                pids.update(self._children(w))
        return pids

    def sample(self, t_s: float) -> None:
        for w in self.watched:
            if w.proc is None or w.exited_at_s is not None:
                continue
            try:
                with w.proc.oneshot():
                    mem = w.proc.memory_info()
                    cpu = w.proc.cpu_times()
            except Exception as exc:
                if self.ps is not None and isinstance(exc, self.ps.NoSuchProcess):
                    w.exited_at_s = round(t_s, 3)
                continue
            used = cpu.user + cpu.system
            cpu_pct = None
            if w._last is not None and t_s > w._last[0]:
                cpu_pct = round(100.0 * (used - w._last[1]) / (t_s - w._last[0]), 1)
            w._last = (t_s, used)
            shared = getattr(mem, "shared", None)
            w.samples.append(ProcessSample(t_s=round(t_s, 3), rss_mib=round(mem.rss / MIB, 1),
                                           shared_mib=round(shared / MIB, 1) if shared is not None else None,
                                           cpu_pct=cpu_pct))

    def host_sample(self, t_s: float) -> HostSample | None:
        if self.ps is None:
            return None
        try:
            sw = self.ps.swap_memory()
            avail = self.ps.virtual_memory().available
        except Exception:
            return None
        sin, sout = getattr(sw, "sin", 0), getattr(sw, "sout", 0)
        rate_in = rate_out = None
        if self._swap_last is not None and t_s > self._swap_last[0]:
            dt = t_s - self._swap_last[0]
            rate_in = round(max(0, sin - self._swap_last[1]) / dt / 1e6, 2)
            rate_out = round(max(0, sout - self._swap_last[2]) / dt / 1e6, 2)
        self._swap_last = (t_s, sin, sout)
        return HostSample(t_s=round(t_s, 3), swap_in_mbs=rate_in, swap_out_mbs=rate_out,
                          ram_available_mib=round(avail / MIB, 1))

    def name_of(self, pid: int) -> str | None:
        if self.ps is None:
            return None
        try:
            return self.ps.Process(pid).name()
        except Exception:
            return None


def _safe(fn: Any) -> str | None:
    try:
        return fn()
    except Exception:
        return None


def owner_problem(pid: int, psutil_module: Any = None) -> str | None:
    """Why this pid cannot be watched (missing, exited, another user's), or None when it can."""
    ps = psutil_module if psutil_module is not None else load_psutil()
    if ps is None:
        return "psutil is not installed; fix: pip install psutil"
    try:
        proc = ps.Process(pid)
        uids = proc.uids()
    except ps.NoSuchProcess:
        return f"no process with pid {pid} is running (check the pid with: ps -p {pid} -o pid,user,cmd)"
    except ps.AccessDenied:
        return f"pid {pid} cannot be read by this user (it belongs to someone else, or /proc is restricted)"
    me = os.getuid() if hasattr(os, "getuid") else None
    if me not in (None, 0) and uids.real != me:
        owner = _safe(proc.username) or f"uid {uids.real}"
        return (f"pid {pid} belongs to {owner}, not to you; the doctor watches only your own processes "
                f"(run it as {owner}, e.g. sudo -u {owner} v100-doctor watch --pid {pid})")
    return None
