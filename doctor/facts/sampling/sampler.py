"""The sampler: one background thread reading NVML and psutil at a bounded rate until stopped.

    sampler = Sampler([0], pids=[1234], hz=5).start()
    ...
    series = sampler.stop()          # SampleSeries, JSON-able via doctor.model.serialize

The rate is clamped to MIN_HZ..MAX_HZ so a caller cannot turn the doctor into a load of its own,
and a tick that overruns its period is not made up with a burst. The thread never raises: NVML
and psutil failures end up as reasons in the series.
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any, Callable, Iterable

from doctor.facts.nvml.session import NvmlSession
from doctor.facts.sampling.counters import CounterSnapshot, read_counters, window_counters
from doctor.facts.sampling.gpu_reader import GpuReader
from doctor.facts.sampling.host_reader import HostReader
from doctor.model.samples import GpuSample, GpuSeries, HostSample, SampleSeries

MIN_HZ, MAX_HZ = 0.2, 10.0
DEFAULT_HZ = 5.0


def clamp_hz(hz: float) -> float:
    return min(MAX_HZ, max(MIN_HZ, float(hz)))


class Sampler:
    def __init__(self, gpu_indices: Iterable[int], pids: Iterable[int] | None = None, hz: float = DEFAULT_HZ, *,
                 nvml_module: Any = None, psutil_module: Any = None, clock: Callable[[], float] = time.monotonic,
                 nvml_refused: str = ""):
        """`nvml_refused`: why NVML must not be opened in this process (the snapshot's child found it hanging,
        crashing or absent: doctor/facts/nvml/isolated.py); the series then carries that reason."""
        self.gpu_indices = tuple(gpu_indices)
        self.pids = tuple(pids or ())
        self.hz = clamp_hz(hz)
        self._nvml = NvmlSession(nvml_module)
        self._psutil_module = psutil_module
        self._clock = clock
        self._t0 = 0.0
        self._started_at = ""
        self._nvml_reason = ""
        self._nvml_refused = nvml_refused
        self._readers: list[GpuReader] = []
        self._counters_start: dict[int, CounterSnapshot] = {}
        self._samples: dict[int, list[GpuSample]] = {}
        self._host_samples: list[HostSample] = []
        self._host: HostReader | None = None
        self._seen_pids: set[int] = set()
        self._family: set[int] = set(self.pids)
        self._statics: dict[int, GpuSeries] = {}
        self._ticks = 0
        self._host_every = max(1, round(self.hz))
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._thread_cpu_s: float | None = None
        self._series: SampleSeries | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self, background: bool = True) -> "Sampler":
        """Open NVML, read the limits and counters, take the first sample, start the thread."""
        self._started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
        self._t0 = self._clock()
        self._open_nvml()
        self._host = HostReader(self.pids, self._psutil_module)
        self._family = self._host.family()  # children that exit before stop() still count as yours
        for r in self._readers:
            self._samples[r.index] = []
            if r.ok:
                self._counters_start[r.index] = read_counters(r.device, 0.0)
        if background:
            self._thread = threading.Thread(target=self._run, name="v100-doctor-sampler", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> SampleSeries:
        """Stop the thread, read the counters again, close NVML; returns the series (idempotent)."""
        if self._series is not None:
            return self._series
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
        self._series = self._build()
        self._nvml.close()
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

    # -- sampling ----------------------------------------------------------------------------
    def tick(self) -> None:
        """One round of readings; the thread calls this, tests and benchmarks may call it directly."""
        t = self._clock() - self._t0
        for r in self._readers:
            s = r.sample(t)
            self._samples[r.index].append(s)
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
        if not self._nvml.open():
            self._nvml_reason = self._nvml.reason
            return
        self._readers = [GpuReader(self._nvml.device(i)) for i in self.gpu_indices]
        self._statics = {r.index: r.static() for r in self._readers}

    def _build(self) -> SampleSeries:
        t_end = self._clock() - self._t0
        gpus = []
        family = self._family | (self._host.family() if self._host else set())
        for r in self._readers:
            counters = None
            if r.index in self._counters_start:
                m = r.pcie
                pcie = (m.total_rx, m.total_tx, m.counted_s) if m.counted_s > 0 else None
                counters = window_counters(self._counters_start[r.index], read_counters(r.device, t_end), pcie)
            static = self._statics[r.index]
            names = {str(pid): name for pid in sorted(self._seen_pids)
                     if (name := self._host.name_of(pid) if self._host else None)}
            gpus.append(replace(static, samples=tuple(self._samples[r.index]), counters=counters, pcie_source=r.pcie.source,
                                process_names=names, unavailable={**static.unavailable, **r.unavailable}))
        return SampleSeries(
            started_at=self._started_at, duration_s=round(t_end, 3), hz=self.hz, gpus=tuple(gpus),
            processes=tuple(w.series() for w in (self._host.watched if self._host else [])),
            host=tuple(self._host_samples), watched_pids=tuple(sorted(family)),
            sampler_cpu_s=round(self._thread_cpu_s, 4) if self._thread_cpu_s is not None else None,
            nvml_reason=self._nvml_reason,
        )


def start(gpu_indices: Iterable[int], pids: Iterable[int] | None = None, hz: float = DEFAULT_HZ, **kw: Any) -> Sampler:
    """Start sampling now; call .stop() on the result for the SampleSeries."""
    return Sampler(gpu_indices, pids, hz, **kw).start()
