"""The sampler's GPUs read through one long-lived child (nvml_child.py), each answer awaited with a deadline.

Gathering reads NVML in a child once (doctor/facts/nvml/isolated.py); a window samples it every tick, so a
hang or a segfault inside libnvidia-ml.so can come at any sample. The child is started once and answers
`open`, `tick` and `end` requests over a pipe; the parent waits for each answer at most `timeout_s`:
- no answer in time: the child's process group is killed and `failure` says "NVML stopped answering after K
  samples: ..."; the samples so far are kept;
- the child dies (SIGSEGV inside NVML): `failure` says "NVML crashed after K samples (SIGSEGV ...)";
- `hurry(s)` (an interrupt): no wait goes past s seconds from now, so a hung call cannot hold a signal up.
Same interface as LocalGpus, so the sampler does not care which one it has.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from typing import Any, Callable, Iterable, TypeVar

from doctor.facts.children import Closed, interrupts_held, reap, spawn, stop
from doctor.facts.nvml.isolated import DEFAULT_TIMEOUT_S, child_env, crashed_after, stopped_answering
from doctor.facts.sampling.local_gpus import GpuEnd
from doctor.model.samples import GpuSample, GpuSeries
from doctor.model.serialize import LoadError, from_jsonable

SLICE_S = 0.05  # how often a wait looks at `hurry`'s limit
REPLY_LIMIT = 4 << 20  # one answer for 64 GPUs is a few tens of KB; more is a garbled or lying child
START_TIMEOUT_S = 20.0  # the child's interpreter and imports, before it touches NVML
INTERRUPTED_HANG_S = 1.0  # a call unanswered this long when the run is interrupted is reported as stopped
_EOF = b"\0eof"
T = TypeVar("T")


class _Lines:
    """Whole lines from a pipe, without blocking past a timeout."""

    def __init__(self, fd: int):
        self.fd, self.buf = fd, b""

    def next(self, timeout_s: float) -> bytes | None:
        """A line, _EOF when the child closed its end, or None when none came within `timeout_s`."""
        if b"\n" not in self.buf:
            ready, _, _ = select.select([self.fd], [], [], max(0.0, timeout_s))
            if ready:
                chunk = os.read(self.fd, 1 << 16)
                if not chunk:
                    return _EOF
                self.buf += chunk
                if len(self.buf) > REPLY_LIMIT:
                    raise ValueError(f"an answer longer than {REPLY_LIMIT} bytes")
            if b"\n" not in self.buf:
                return None
        line, _, self.buf = self.buf.partition(b"\n")
        return line


def child_command(indices: tuple[int, ...]) -> list[str]:
    """The sampler's NVML child (tests put a stand-in that hangs or crashes at a chosen request here)."""
    return [sys.executable, "-m", "doctor.facts.sampling.nvml_child", "--gpus", ",".join(str(i) for i in indices)]


class ChildGpus:
    def __init__(self, indices: Iterable[int], timeout_s: float = DEFAULT_TIMEOUT_S):
        self.indices = tuple(indices)
        self.timeout_s = timeout_s
        self.statics: dict[int, GpuSeries] = {}
        self.failure = ""  # why the readings ended before the window did (a hang, a crash)
        self.cpu_s: float | None = None  # the child's CPU time from `open` to `end`, as it measured it
        self.samples_taken = 0
        self._meta: dict[int, dict[str, Any]] = {}
        self._limit: float | None = None  # hurry(): no wait past this time.monotonic()
        self._proc: subprocess.Popen | None = None
        self._lines: _Lines | None = None
        self._done = False  # the child is gone (ended, killed or failed): no more requests

    # -- the interface LocalGpus has ---------------------------------------------------------------
    def open(self, t_s: float) -> str:
        """"" once the child has NVML open and each GPU's limits; else why NVML did not open there.
        A hang or a crash is `failure` instead (and "" is returned)."""
        try:
            with interrupts_held():  # a signal during the start waits until the child is registered for stop_all()
                self._proc = spawn(child_command(self.indices), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, env=child_env())
        except (OSError, Closed) as exc:
            self._done = True
            return f"the NVML sampler could not start: {exc}"
        assert self._proc.stdout is not None
        self._lines = _Lines(self._proc.stdout.fileno())
        try:
            opened = None
            if self._started():
                opened = self._answer(f"open {t_s!r}", lambda r: (
                    str(r["reason"]), {int(i): from_jsonable(GpuSeries, s) for i, s in r["statics"].items()}))
        except BaseException:  # an interrupt while waiting: the child must not outlive the wait
            self._end_child(kill=True)
            raise
        if opened is None:
            return ""
        reason, self.statics = opened
        if reason:
            self._end_child()
        return reason

    def tick(self, t_s: float) -> dict[int, GpuSample]:
        got = self._answer(f"tick {t_s!r}", lambda r: (
            {int(i): from_jsonable(GpuSample, s) for i, s in r["samples"].items()},
            {int(i): {"unavailable": dict(m["unavailable"]), "pcie_source": str(m["pcie_source"])}
             for i, m in r["meta"].items()}))
        if got is None:
            return {}
        samples, meta = got
        self._meta.update(meta)
        self.samples_taken += 1
        return samples

    def pcie_source(self, index: int) -> str:
        return str(self._meta.get(index, {}).get("pcie_source", ""))

    def unavailable(self, index: int) -> dict[str, str]:
        static = self.statics.get(index)
        own = self._meta.get(index, {}).get("unavailable", {})
        return {**(static.unavailable if static else {}), **own}

    def finish(self, t_s: float) -> dict[int, GpuEnd]:
        got = self._answer(f"end {t_s!r}", lambda r: (
            float(r["cpu_s"]), {int(i): from_jsonable(GpuEnd, e) for i, e in r["end"].items()}))
        if got is None:
            return {}
        self.cpu_s, ends = got
        self._end_child()
        return ends

    def hurry(self, wait_s: float) -> None:
        """From now on no answer is awaited longer than `wait_s` more (another thread may call this)."""
        self._limit = time.monotonic() + wait_s

    def close(self) -> None:
        self._end_child()

    # -- the pipe ----------------------------------------------------------------------------------
    def _started(self) -> bool:
        """The child's first line says its interpreter and modules are loaded: that start-up is not NVML's time,
        so it gets START_TIMEOUT_S (a loaded machine can take seconds), and NVML's deadline starts at `open`."""
        line = self._await(time.monotonic(), max(self.timeout_s, START_TIMEOUT_S), "start")
        if line is not None and self._parsed(line) is not None:
            return True
        return False

    def _ask(self, request: str) -> dict[str, Any] | None:
        """The child's answer, or None: then `failure` says why (a hang, a crash), or the run is hurrying."""
        if self._done or self._proc is None or self._lines is None:
            return None
        sent = time.monotonic()
        try:
            assert self._proc.stdin is not None
            self._proc.stdin.write(request.encode() + b"\n")
            self._proc.stdin.flush()
        except OSError:  # the child is gone: its exit status says how
            self._died()
            return None
        line = self._await(sent, self.timeout_s, request.split()[0])
        return None if line is None else self._parsed(line)

    def _await(self, since: float, timeout_s: float, what: str) -> bytes | None:
        """The child's next line, or None with `failure` set (or the run hurrying)."""
        assert self._lines is not None
        deadline = since + timeout_s
        while True:
            now = time.monotonic()
            end = deadline if self._limit is None else min(deadline, self._limit)
            if now >= end:
                self._no_answer(now - since, hurried=end < deadline, what=what)
                return None
            try:
                line = self._lines.next(min(SLICE_S, end - now))
            except ValueError as exc:
                self._garbled(str(exc))
                return None
            if line is _EOF:
                self._died()
                return None
            if line is not None:
                return line

    def _parsed(self, line: bytes) -> dict[str, Any] | None:
        try:
            reply = json.loads(line)
        except (ValueError, RecursionError) as exc:
            reply = f"{type(exc).__name__}: {exc}"
        if isinstance(reply, dict):
            return reply
        self._garbled(reply if isinstance(reply, str) else "not a JSON object")
        return None

    def _answer(self, request: str, read: Callable[[dict[str, Any]], T]) -> T | None:
        """`read` of the child's answer; None when there is none (see `failure`) or it has the wrong shape."""
        reply = self._ask(request)
        if reply is None:
            return None
        try:
            return read(reply)
        except (LoadError, KeyError, TypeError, ValueError, AttributeError) as exc:
            self._garbled(f"{type(exc).__name__}: {exc}")
            return None

    def _no_answer(self, waited_s: float, hurried: bool, what: str) -> None:
        self._end_child(kill=True)
        if what == "start":
            if not hurried:
                self.failure = f"the NVML sampler did not start within {waited_s:.1f} s (this machine is overloaded)"
        elif not hurried:
            self.failure = stopped_answering(self.samples_taken, self.timeout_s)
        elif waited_s >= INTERRUPTED_HANG_S:
            self.failure = stopped_answering(self.samples_taken, waited_s, interrupted=True)

    def _died(self) -> None:
        proc = self._proc
        assert proc is not None
        try:
            code = proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:  # closed its output but lives on: stopped all the same
            self._end_child(kill=True)
            code = proc.returncode if proc.returncode is not None else 0
        self._end_child()
        self.failure = crashed_after(self.samples_taken, code)

    def _garbled(self, detail: str) -> None:
        self._end_child(kill=True)
        self.failure = f"the NVML sampler's answer could not be read (after {self.samples_taken} of its samples: {detail})"

    def _end_child(self, kill: bool = False) -> None:
        """No more requests; the child ends (it exits on `end` or when its input closes) or is killed."""
        self._done = True
        proc = self._proc
        if proc is None:
            return
        if not kill and proc.poll() is None:
            try:
                assert proc.stdin is not None
                proc.stdin.close()
                proc.wait(timeout=0.5)
            except (OSError, subprocess.TimeoutExpired):
                kill = True
        if kill and proc.poll() is None:
            stop(proc)
        for pipe in (proc.stdin, proc.stdout):
            try:
                if pipe is not None:
                    pipe.close()
            except OSError:
                pass
        reap(proc)
