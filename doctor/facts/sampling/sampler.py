"""The sampler: one background thread reading NVML and psutil at a bounded rate until stopped.

    sampler = Sampler([0], pids=[1234], hz=5).start()
    ...
    series = sampler.stop()          # SampleSeries, JSON-able via doctor.model.serialize

The rate is clamped to MIN_HZ..MAX_HZ so a caller cannot turn the doctor into a load of its own,
and a tick that overruns its period is not made up with a burst. The thread never raises: NVML
and psutil failures end up as reasons in the series.

NVML is read in one long-lived child (child_gpus.py, nvml_child.py), each answer awaited at most
`nvml_timeout_s`: a hang or a crash inside libnvidia-ml.so at any tick ends the GPU readings with the
reason in `nvml_failure` (the series' `nvml_stopped`), keeps the samples so far, and never holds up the
caller or a signal. Host readings (psutil) stay in this process.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any, Callable, Iterable

from doctor.facts.nvml.isolated import DEFAULT_TIMEOUT_S
from doctor.facts.sampling.child_gpus import ChildGpus
from doctor.facts.sampling.host_reader import HostReader
from doctor.facts.sampling.local_gpus import GpuEnd, LocalGpus
from doctor.model.samples import GpuSample, HostSample, SampleSeries

MIN_HZ, MAX_HZ = 0.2, 10.0
DEFAULT_HZ = 5.0


def clamp_hz(hz: float) -> float:
    return min(MAX_HZ, max(MIN_HZ, float(hz)))


class Sampler:
    def __init__(self, gpu_indices: Iterable[int], pids: Iterable[int] | None = None, hz: float = DEFAULT_HZ, *,
                 nvml_module: Any = None, psutil_module: Any = None, clock: Callable[[], float] = time.monotonic,
                 nvml_refused: str = "", nvml_timeout_s: float = DEFAULT_TIMEOUT_S, isolated: bool | None = None):
        """`nvml_refused`: why NVML must not be opened at all (the snapshot's child found it hanging, crashing or
        absent: doctor/facts/nvml/isolated.py); the series then carries that reason. `isolated`: read NVML in the
        sampler's child (the default) or in this process (the default with an injected `nvml_module`, which
        cannot cross a process boundary; False also measures what the child costs)."""
        self.gpu_indices = tuple(gpu_indices)
        self.pids = tuple(pids or ())
        self.hz = clamp_hz(hz)
        if isolated is None:
            isolated = nvml_module is None and os.name == "posix"
        self._gpus: LocalGpus | ChildGpus = (ChildGpus(self.gpu_indices, nvml_timeout_s) if isolated
                                             else LocalGpus(self.gpu_indices, nvml_module))
        self._timeout_s = nvml_timeout_s
        self._psutil_module = psutil_module
        self._clock = clock
        self._t0 = 0.0
        self._started_at = ""
        self._nvml_reason = ""
        self._nvml_refused = nvml_refused
        self._samples: dict[int, list[GpuSample]] = {}
        self._host_samples: list[HostSample] = []
        self._host: HostReader | None = None
        self._seen_pids: set[int] = set()
        self._family: set[int] = set(self.pids)
        self._ticks = 0
        self._host_every = max(1, round(self.hz))
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._thread_cpu_s: float | None = None
        self._series: SampleSeries | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self, background: bool = True) -> "Sampler":
        """Open NVML (in the child: at most the deadline), read the limits and counters, start the thread."""
        self._started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
        self._t0 = self._clock()
        self._host = HostReader(self.pids, self._psutil_module)
        self._family = self._host.family()  # children that exit before stop() still count as yours
        self._open_nvml()
        if background:
            self._thread = threading.Thread(target=self._run, name="v100-doctor-sampler", daemon=True)
            self._thread.start()
        return self

    def stop(self, wait_s: float | None = None) -> SampleSeries:
        """Stop the thread, read the counters again, close NVML; returns the series (idempotent).
        `wait_s`: wait at most this long for NVML (an interrupt: a hung call must not hold the run up);
        by default a call gets the whole deadline."""
        if self._series is not None:
            return self._series
        if wait_s is not None:
            self._gpus.hurry(wait_s)
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=(self._timeout_s if wait_s is None else wait_s) + 1.0)
        self._series = self._build()
        self._gpus.close()
        return self._series

    def __enter__(self) -> "Sampler":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- what a live caller may look at ------------------------------------------------------
    @property
    def elapsed_s(self) -> float:
        return self._clock() - self._t0

    def latest(self, index: int) -> GpuSample | None:
        samples = self._samples.get(index)
        return samples[-1] if samples else None

    def watched_all_exited(self) -> bool:
        """True once every watched pid has gone (False when no pid is watched)."""
        h = self._host
        asked = [w for w in h.watched if w.parent is None] if h else []
        return bool(asked) and all(w.exited_at_s is not None or w.proc is None for w in asked)

    @property
    def nvml_child_cpu_s(self) -> float | None:
        """CPU time the NVML child reported for answering, from `open` to `end` (its start-up not counted);
        None in-process, or when it ended without answering `end`."""
        return self._gpus.cpu_s

    @property
    def nvml_failure(self) -> str:
        """Why the GPU readings ended before the window did ("NVML stopped answering after K samples: ...",
        "NVML crashed after K samples (...)"); "" while they go on."""
        return self._gpus.failure

    # -- sampling ----------------------------------------------------------------------------
    def tick(self) -> None:
        """One round of readings; the thread calls this, tests and benchmarks may call it directly."""
        t = self._clock() - self._t0
        if self._gpus.statics and not self._gpus.failure:
            for index, s in self._gpus.tick(t).items():
                self._samples[index].append(s)
                if s.processes:
                    self._seen_pids.update(p.pid for p in s.processes)
        if self._host is not None:
            self._host.sample(t)
            if self._ticks % self._host_every == 0:  # swap and RAM change slowly: about once a second
                hs = self._host.host_sample(t)
                if hs is not None:
                    self._host_samples.append(hs)
        self._ticks += 1

    def _run(self) -> None:
        cpu0 = time.thread_time()
        period = 1.0 / self.hz
        next_t = self._clock()
        while not self._stop.is_set():
            try:
                self.tick()
            except Exception as exc:  # a bug here must not kill the thread silently mid-window
                self._nvml_reason = self._nvml_reason or f"sampling failed: {type(exc).__name__}: {exc}"
                break
            next_t += period
            now = self._clock()
            if next_t < now:  # overran: skip the missed ticks instead of bursting
                next_t = now
            self._stop.wait(max(0.0, next_t - now))
        self._thread_cpu_s = time.thread_time() - cpu0

    def _open_nvml(self) -> None:
        if self._nvml_refused:
            self._nvml_reason = self._nvml_refused
            return
        self._nvml_reason = self._gpus.open(self._clock() - self._t0)
        self._samples = {index: [] for index in self._gpus.statics}

    def _build(self) -> SampleSeries:
        t_end = self._clock() - self._t0
        gpus = self._gpus
        busy = self._thread is not None and self._thread.is_alive()  # still in a call: the pipe is not ours to use
        ends = gpus.finish(t_end) if gpus.statics and not gpus.failure and not busy else {}
        family = self._family | (self._host.family() if self._host else set())
        names = {str(pid): name for pid in sorted(self._seen_pids)
                 if (name := self._host.name_of(pid) if self._host else None)}
        series = []
        for index, static in gpus.statics.items():
            end = ends.get(index) or GpuEnd(None, gpus.pcie_source(index), gpus.unavailable(index))
            series.append(replace(static, samples=tuple(self._samples[index]), counters=end.counters,
                                  pcie_source=end.pcie_source, process_names=names, unavailable=end.unavailable))
        cpu = None if self._thread_cpu_s is None else self._thread_cpu_s + (gpus.cpu_s or 0.0)
        return SampleSeries(
            started_at=self._started_at, duration_s=round(t_end, 3), hz=self.hz, gpus=tuple(series),
            processes=tuple(w.series() for w in (self._host.watched if self._host else [])),
            host=tuple(self._host_samples), watched_pids=tuple(sorted(family)),
            sampler_cpu_s=round(cpu, 4) if cpu is not None else None,
            nvml_reason=self._nvml_reason, nvml_stopped=gpus.failure,
        )


def start(gpu_indices: Iterable[int], pids: Iterable[int] | None = None, hz: float = DEFAULT_HZ, **kw: Any) -> Sampler:
    """Start sampling now; call .stop() on the result for the SampleSeries."""
    return Sampler(gpu_indices, pids, hz, **kw).start()
