"""What the card and the host did during the probe's timed decode runs, read from the probe report.

Only samples inside the reported pass's decode windows count: a warm-up, a reload or a model
load moves very different bytes over PCIe and keeps the GPU differently busy.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from doctor.model.probe_results import ProbeReport
from doctor.model.sample_summary import GpuSummary, summarize_gpu
from doctor.model.samples import GpuSeries


@dataclass(frozen=True)
class DecodeEvidence:
    samples: int  # NVML samples inside the decode windows
    util_pct: float | None = None  # GPU busy (a kernel running), mean
    mem_util_pct: float | None = None  # device memory being read or written, mean (NVML utilization.memory)
    mem_clock_ratio: float | None = None  # median of busy samples / max
    sm_clock_ratio: float | None = None
    throttle_reasons: tuple[str, ...] = ()  # seen in busy samples
    temperature_max_c: int | None = None
    pcie_rx_mbs: float | None = None  # host -> GPU during decode, MB/s
    pcie_gen: int | None = None
    pcie_width: int | None = None
    competitors: tuple[str, ...] = ()  # other processes holding memory on the GPU ("pid 123 python (2,048 MiB)")
    cpu_wall: float | None = None  # the worker's own CPU time / wall time
    faults_per_token: float | None = None


def decode_gpu_summary(probe: ProbeReport, gpu_index: int, pass_index: int) -> tuple[GpuSummary, tuple] | None:
    series = probe.samples
    if series is None:
        return None
    g: GpuSeries | None = series.gpu(gpu_index) or (series.gpus[0] if series.gpus else None)
    if g is None:
        return None
    windows = [(w.start_s, w.end_s) for w in probe.windows if w.phase == "decode" and w.pass_index == pass_index]
    if not windows:
        return None
    inside = tuple(s for s in g.samples if any(a <= s.t_s <= b for a, b in windows))
    if not inside:
        return None
    return summarize_gpu(replace(g, samples=inside, counters=None)), inside


def decode_evidence(probe: ProbeReport, gpu_index: int = 0) -> DecodeEvidence:
    r = probe.result
    pass_index = r.reported_pass if r else 1
    reported = r.reported if r else None
    host: dict[str, Any] = dict(cpu_wall=reported.cpu_wall if reported and reported.runs else None,
                faults_per_token=round(reported.faults_per_token, 1) if reported and reported.runs else None)
    found = decode_gpu_summary(probe, gpu_index, pass_index)
    if found is None:
        return DecodeEvidence(samples=0, **host)
    s, inside = found
    utils = [x.util_gpu_pct for x in inside if x.util_gpu_pct is not None]  # all samples: an idle GPU is the point
    mems = [x.util_mem_pct for x in inside if x.util_mem_pct is not None]
    watched = {str(p) for p in (probe.samples.watched_pids if probe.samples else ())}
    g = probe.samples.gpu(gpu_index) if probe.samples else None
    names = g.process_names if g else {}
    others = tuple(f"pid {pid} {names.get(pid, '?')} ({mib:,.0f} MiB)" for pid, mib in sorted(s.process_max_mib.items())
                   if pid not in watched)
    reasons = tuple(sorted(s.throttle_fraction_busy))
    return DecodeEvidence(samples=s.samples, util_pct=round(sum(utils) / len(utils), 1) if utils else None,
                          mem_util_pct=round(sum(mems) / len(mems), 1) if mems else None, mem_clock_ratio=s.mem_clock_ratio,
                          sm_clock_ratio=s.sm_clock_ratio, throttle_reasons=reasons, temperature_max_c=s.temperature_max_c,
                          pcie_rx_mbs=s.pcie_rx_busy_median_mbs if s.pcie_rx_busy_median_mbs is not None else s.pcie_rx_mean_mbs,
                          pcie_gen=s.pcie_gen_busy_min, pcie_width=s.pcie_width_busy_min, competitors=others, **host)
