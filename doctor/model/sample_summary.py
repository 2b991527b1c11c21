"""Reduce a GPU's time series to the few numbers the runtime checks and the text report use.

"Busy" samples are those with work on the GPU (util above 0%) and without the driver's gpu_idle reason:
idle clocks are the card saving power, never throttling, so clock ratios and throttle fractions under load are taken over busy
samples only. Where the driver's cumulative counters exist, they win over sampled estimates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import mean, median
from typing import Callable, Iterable, TypeVar

from doctor.model.samples import GpuSample, GpuSeries, SampleSeries

# Reasons that mean the clocks are held below what the work asks for.
THROTTLE_REASONS = ("sw_power_cap", "hw_slowdown", "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown")
HEAT_REASONS = ("sw_thermal_slowdown", "hw_thermal_slowdown")
STREAMING_RX_MBS = 500.0  # host->GPU above this in a busy sample counts as bulk transfer, not token traffic
MEM_CLOCK_DROP = 0.97  # a memory clock under 97% of max counts as dropped


@dataclass(frozen=True)
class GpuSummary:
    index: int
    samples: int
    busy_samples: int
    window_s: float
    sm_clock_median_mhz: float | None = None  # busy samples
    sm_clock_ratio: float | None = None  # busy median / max
    mem_clock_ratio: float | None = None  # busy median / max
    mem_clock_ratio_min: float | None = None
    mem_clock_dropped_fraction: float | None = None  # busy samples with the memory clock below 97% of max
    reason_fraction: dict[str, float] = field(default_factory=dict)  # all samples
    throttle_fraction_busy: dict[str, float] = field(default_factory=dict)  # busy samples, throttle reasons only
    counter_throttle_s: dict[str, float] = field(default_factory=dict)  # driver counters, seconds in the window
    temperature_max_c: int | None = None
    temperature_mean_c: float | None = None
    memory_temperature_max_c: int | None = None
    power_mean_w: float | None = None
    power_max_w: float | None = None
    power_source: str = ""  # "energy counter" | "samples"
    util_busy_mean_pct: float | None = None
    pcie_rx_mean_mbs: float | None = None  # whole window
    pcie_rx_busy_median_mbs: float | None = None
    pcie_rx_max_mbs: float | None = None
    pcie_rx_streaming_fraction: float | None = None  # busy samples above STREAMING_RX_MBS
    pcie_tx_mean_mbs: float | None = None
    pcie_source: str = ""  # "byte counters" | "samples"
    pcie_gen_busy_min: int | None = None
    pcie_width_busy_min: int | None = None
    memory_used_max_mib: float | None = None
    process_max_mib: dict[str, float] = field(default_factory=dict)  # pid -> most MiB seen


def is_busy(s: GpuSample) -> bool:
    """A sample with work on the GPU: a kernel ran in NVML's last utilisation period (util above 0%: "percent of time
    over the past sample period during which one or more kernels was executing",
    https://docs.nvidia.com/deploy/nvml-api/structnvmlUtilization__t.html), and the driver does not call it idle.
    Both are needed: cards whose clocks stay at their maximum (the H200 recorded in benchmarks/results/issue38-streams)
    report no gpu_idle reason while util reads 0%."""
    if s.util_gpu_pct is not None and s.util_gpu_pct <= 0:
        return False
    if s.reasons is not None:
        return "gpu_idle" not in s.reasons
    return s.util_gpu_pct is not None


N = TypeVar("N", int, float)


def _values(samples: Iterable[GpuSample], get: Callable[[GpuSample], N | None]) -> list[N]:
    return [v for s in samples if (v := get(s)) is not None]


def _r(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def _has(reason: str) -> Callable[[GpuSample], bool]:
    return lambda s: reason in (s.reasons or ())


def _fraction(samples: list[GpuSample], test: Callable[[GpuSample], bool]) -> float | None:
    return round(sum(1 for s in samples if test(s)) / len(samples), 3) if samples else None


def summarize_gpu(g: GpuSeries) -> GpuSummary:
    all_s = list(g.samples)
    busy = [s for s in all_s if is_busy(s)]
    window = g.counters.window_s if g.counters else (all_s[-1].t_s - all_s[0].t_s if len(all_s) > 1 else 0.0)
    sm = _values(busy, lambda s: s.sm_clock_mhz)
    mem = _values(busy, lambda s: s.mem_clock_mhz)
    mem_ratios = [m / g.mem_clock_max_mhz for m in mem] if g.mem_clock_max_mhz else []
    with_reasons = [s for s in all_s if s.reasons is not None]
    busy_reasons = [s for s in busy if s.reasons is not None]
    seen = sorted({r for s in with_reasons for r in s.reasons or ()})
    temps = _values(all_s, lambda s: s.temperature_c)
    power = _values(busy or all_s, lambda s: s.power_w)
    power_mean, power_source = (mean(power) if power else None), ("samples" if power else "")
    if g.counters and g.counters.energy_j is not None and g.counters.window_s > 0:
        power_mean, power_source = g.counters.energy_j / g.counters.window_s, "energy counter"
    rx_all = _values(all_s, lambda s: s.pcie_rx_mbs)
    rx_busy = _values(busy, lambda s: s.pcie_rx_mbs)
    tx_all = _values(all_s, lambda s: s.pcie_tx_mbs)
    rx_mean, tx_mean = (mean(rx_all) if rx_all else None), (mean(tx_all) if tx_all else None)
    pcie_source = f"samples: {g.pcie_source}" if g.pcie_source else "samples"
    if g.counters and g.counters.pcie_rx_bytes is not None and g.counters.pcie_counted_s:
        rx_mean, pcie_source = g.counters.pcie_rx_bytes / g.counters.pcie_counted_s / 1e6, "byte counters"
        if g.counters.pcie_tx_bytes is not None:
            tx_mean = g.counters.pcie_tx_bytes / g.counters.pcie_counted_s / 1e6
    procs: dict[str, float] = {}
    for s in all_s:
        for p in s.processes or ():
            if p.used_mib is not None:
                procs[str(p.pid)] = max(procs.get(str(p.pid), 0.0), p.used_mib)
    gens = _values(busy, lambda s: s.pcie_gen)
    widths = _values(busy, lambda s: s.pcie_width)
    used = _values(all_s, lambda s: s.memory_used_mib)
    return GpuSummary(
        index=g.index, samples=len(all_s), busy_samples=len(busy), window_s=round(window, 3),
        sm_clock_median_mhz=_r(median(sm) if sm else None, 1),
        sm_clock_ratio=_r(median(sm) / g.sm_clock_max_mhz if sm and g.sm_clock_max_mhz else None),
        mem_clock_ratio=_r(median(mem_ratios) if mem_ratios else None),
        mem_clock_ratio_min=_r(min(mem_ratios) if mem_ratios else None),
        mem_clock_dropped_fraction=_r(sum(1 for r in mem_ratios if r < MEM_CLOCK_DROP) / len(mem_ratios)
                                      if mem_ratios else None),
        reason_fraction={r: f for r in seen if (f := _fraction(with_reasons, _has(r))) is not None},
        throttle_fraction_busy={r: f for r in THROTTLE_REASONS
                                if (f := _fraction(busy_reasons, _has(r)))},
        counter_throttle_s=dict(g.counters.throttle_s) if g.counters else {},
        temperature_max_c=max(temps) if temps else None,
        temperature_mean_c=_r(mean(temps) if temps else None, 1),
        memory_temperature_max_c=max(mt) if (mt := _values(all_s, lambda s: s.memory_temperature_c)) else None,
        power_mean_w=_r(power_mean, 1), power_max_w=_r(max(power) if power else None, 1), power_source=power_source,
        util_busy_mean_pct=_r(mean(u) if (u := _values(busy, lambda s: s.util_gpu_pct)) else None, 1),
        pcie_rx_mean_mbs=_r(rx_mean, 1),
        pcie_rx_busy_median_mbs=_r(median(rx_busy) if rx_busy else None, 1),
        pcie_rx_max_mbs=_r(max(rx_all) if rx_all else None, 1),
        pcie_rx_streaming_fraction=_r(sum(1 for v in rx_busy if v >= STREAMING_RX_MBS) / len(rx_busy) if rx_busy else None),
        pcie_tx_mean_mbs=_r(tx_mean, 1), pcie_source=pcie_source if rx_all or g.counters and g.counters.pcie_rx_bytes is not None else "",
        pcie_gen_busy_min=int(min(gens)) if gens else None,
        pcie_width_busy_min=int(min(widths)) if widths else None,
        memory_used_max_mib=max(used) if used else None,
        process_max_mib=procs,
    )


def summarize(series: SampleSeries) -> list[GpuSummary]:
    return [summarize_gpu(g) for g in series.gpus]
