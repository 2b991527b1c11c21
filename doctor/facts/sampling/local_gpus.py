"""The GPUs of one sampling window, read in the calling process: NVML opened once, each GPU's limits and first
counters at `open`, one sample per GPU per `tick`, the window's counters at `finish`.

The sampler's NVML child (nvml_child.py) is where this normally runs, so a hang or a crash inside
libnvidia-ml.so costs the child, not the doctor (child_gpus.py is the parent's side). The sampler runs it in
its own process only with an injected pynvml module (tests) or when told to (`isolated=False`, to measure what
the child costs: benchmarks/sampler_cost.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from doctor.facts.nvml.session import NvmlSession
from doctor.facts.sampling.counters import CounterSnapshot, read_counters, window_counters
from doctor.facts.sampling.gpu_reader import GpuReader
from doctor.model.samples import GpuSample, GpuSeries, WindowCounters


@dataclass(frozen=True)
class GpuEnd:
    """What one GPU's series gets at the end of the window, besides its limits and samples."""

    counters: WindowCounters | None = None
    pcie_source: str = ""
    unavailable: dict[str, str] = field(default_factory=dict)


class LocalGpus:
    """Never raises for what NVML refuses; `failure` stays empty (a hang or a crash here is the caller's)."""

    failure = ""
    cpu_s: float | None = None  # the calling thread's CPU time already counts this work

    def __init__(self, indices: Iterable[int], module: Any = None):
        self.indices = tuple(indices)
        self._nvml = NvmlSession(module)
        self.readers: list[GpuReader] = []
        self.statics: dict[int, GpuSeries] = {}
        self._counters_start: dict[int, CounterSnapshot] = {}
        self.samples_taken = 0

    def open(self, t_s: float) -> str:
        """"" once NVML is open and each GPU's limits and first counters are read; else why NVML did not open."""
        if not self._nvml.open():
            return self._nvml.reason
        self.readers = [GpuReader(self._nvml.device(i)) for i in self.indices]
        for r in self.readers:
            self.statics[r.index] = r.static()
            if r.ok:
                self._counters_start[r.index] = read_counters(r.device, t_s)
        return ""

    def tick(self, t_s: float) -> dict[int, GpuSample]:
        samples = {r.index: r.sample(t_s) for r in self.readers}
        self.samples_taken += 1
        return samples

    def pcie_source(self, index: int) -> str:
        return next((r.pcie.source for r in self.readers if r.index == index), "")

    def unavailable(self, index: int) -> dict[str, str]:
        """Each reading the driver refused or gave implausibly, with the first reason (limits' and samples')."""
        static = self.statics.get(index)
        own = next((r.unavailable for r in self.readers if r.index == index), {})
        return {**(static.unavailable if static else {}), **own}

    def finish(self, t_s: float) -> dict[int, GpuEnd]:
        """The counters read again; their deltas over the window, with the PCIe bytes the meter summed."""
        out = {}
        for r in self.readers:
            counters = None
            start = self._counters_start.get(r.index)
            if start is not None:
                m = r.pcie
                pcie = (m.total_rx, m.total_tx, m.counted_s) if m.counted_s > 0 else None
                counters = window_counters(start, read_counters(r.device, t_s), pcie)
            out[r.index] = GpuEnd(counters, r.pcie.source, self.unavailable(r.index))
        return out

    def hurry(self, wait_s: float) -> None:
        """Nothing to hurry: a call in this process returns when NVML does."""

    def close(self) -> None:
        self._nvml.close()
