"""The named causes of lost decode time, each estimated from its own evidence, and the fixes they imply.

Time per token is the unit: the ideal is weights ÷ bandwidth (the zero-context ceiling, the
seed's 70.9 tok/s arithmetic), the measurement is 1 ÷ tok/s, and each cause adds milliseconds
it can show evidence for. Whatever no cause can show stays "unexplained"; when the estimates
overlap and add up to more than the gap they are scaled down to it, and the verdict says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from doctor.knowledge.engines import kernel_path_cost
from doctor.knowledge.pcie import practical_gbs
from doctor.model.ids import CauseId
from doctor.model.units import gb
from doctor.model.verdict import Cause
from doctor.verdict.evidence import DecodeEvidence

HOST_BOUND_UTIL_PCT = 70.0  # below this the GPU waits on the host for a large part of each token
MIN_SAMPLES = 3  # utilisation from fewer samples than this is not evidence (a decode shorter than ~0.6 s at 5 Hz)
CLOCK_DROP = 0.97  # a clock below 97% of its max under load is held back


@dataclass(frozen=True)
class Inputs:
    t_meas_ms: float
    t_weights_ms: float  # weights / datasheet (or measured) bandwidth
    t_kv_ms: float
    bandwidth_gbs: float
    weights_bytes: float
    kv_bytes: float
    offloaded_bytes: float
    context: int
    cache_mode: str
    engine: str
    fmt: str
    act_order: bool | None
    evidence: DecodeEvidence


def kv_reads(x: Inputs) -> Cause | None:
    if x.kv_bytes <= 0:
        return None
    return Cause(CauseId.KV_READS, f"KV cache reads at {x.context:,} tokens of context ({x.cache_mode})", x.t_kv_ms,
                 evidence={"kv_read_gb_per_token": round(x.kv_bytes / 1e9, 3), "context_tokens": x.context,
                           "cache_mode": x.cache_mode},
                 sentence=f"{gb(x.kv_bytes, 2)} of {x.cache_mode.upper()} KV cache is read per token at "
                          f"{x.context:,} tokens of context", estimated=False)


def throttled(x: Inputs) -> Cause | None:
    e = x.evidence
    ratios = [r for r in (e.mem_clock_ratio, e.sm_clock_ratio if e.throttle_reasons else None) if r is not None]
    if not ratios or min(ratios) >= CLOCK_DROP:
        return None
    r = min(ratios)
    lost = (x.t_weights_ms + x.t_kv_ms) * (1 / r - 1)
    why = ", ".join(e.throttle_reasons) or "no reason reported"
    return Cause(CauseId.THROTTLED_CLOCKS, "clocks held below max under load", lost,
                 evidence={"mem_clock_ratio": e.mem_clock_ratio, "sm_clock_ratio": e.sm_clock_ratio,
                           "reasons": list(e.throttle_reasons), "temperature_max_c": e.temperature_max_c},
                 sentence=f"the clocks ran at {r:.0%} of max during decode ({why}"
                          + (f", {e.temperature_max_c} °C" if e.temperature_max_c else "") + ")")


def offload(x: Inputs) -> Cause | None:
    """Bytes that cross PCIe each token cost at least their transfer time at the link's usable rate."""
    e = x.evidence
    measured_rx = (e.pcie_rx_mbs or 0) * 1e6  # bytes/s host -> GPU, averaged over decode
    crossing = x.offloaded_bytes or measured_rx * x.t_meas_ms / 1000
    if crossing < 5e6:  # a few MB per token is the embedding row and logits, not offload
        return None
    link = (practical_gbs(e.pcie_gen or 3, e.pcie_width or 16) or 12.6) * 1e9
    rate = max(link, measured_rx)
    lost = crossing / rate * 1000
    how = "measured during decode" if not x.offloaded_bytes else "offloaded weights"
    return Cause(CauseId.CPU_OFFLOAD, "weights crossing PCIe every token (offload)", lost,
                 evidence={"crossing_gb_per_token": round(crossing / 1e9, 3), "pcie_rx_mbs": e.pcie_rx_mbs,
                           "link_gbs_usable": round(link / 1e9, 2), "pcie_gen": e.pcie_gen, "pcie_width": e.pcie_width,
                           "bytes_from": how},
                 sentence=f"{gb(crossing, 2)} cross PCIe per token ({how}"
                          + (f", RX {measured_rx / 1e9:.1f} GB/s" if measured_rx else "") + f"), {lost:.0f} ms at the link's "
                          f"{link / 1e9:.1f} GB/s")


def host_bound(x: Inputs, already_idle_ms: float = 0.0) -> Cause | None:
    """The time the GPU ran no kernel at all, less what PCIe transfers already explain, is the host's."""
    e = x.evidence
    if e.util_pct is None or e.samples < MIN_SAMPLES or e.util_pct >= HOST_BOUND_UTIL_PCT:
        return None
    lost = max(0.0, x.t_meas_ms * (1 - e.util_pct / 100) - already_idle_ms)
    if lost <= 0:
        return None
    cpu = f", the worker at {e.cpu_wall:.2f} CPU/wall" if e.cpu_wall is not None else ""
    faults = f", {e.faults_per_token:g} page faults/token" if e.faults_per_token else ""
    return Cause(CauseId.HOST_BOUND, "host-bound decode (the GPU waits for the CPU)", lost,
                 evidence={"gpu_util_pct": e.util_pct, "cpu_wall": e.cpu_wall, "faults_per_token": e.faults_per_token,
                           "decode_samples": e.samples},
                 sentence=f"the GPU ran kernels only {e.util_pct:.0f}% of decode time{cpu}{faults}")


def launch_bound(x: Inputs) -> Cause | None:
    """Kernels running while the memory idles: many small launches and latency-bound kernels, a per-token
    cost that does not shrink with fewer bytes (small models on fast cards; FP16 math on Pascal)."""
    e = x.evidence
    if e.util_pct is None or e.mem_util_pct is None or e.samples < MIN_SAMPLES:
        return None
    lost = x.t_meas_ms * max(0.0, min(e.util_pct, 100.0) - e.mem_util_pct) / 100
    if lost <= 0:
        return None
    return Cause(CauseId.LAUNCH_BOUND, "launch/latency-bound decode (kernels run, the memory idles)", lost,
                 evidence={"gpu_util_pct": e.util_pct, "memory_util_pct": e.mem_util_pct, "decode_samples": e.samples,
                           "ms_per_token": round(x.t_meas_ms, 3), "ideal_ms_per_token": round(x.t_weights_ms + x.t_kv_ms, 3)},
                 sentence=f"the GPU ran kernels {e.util_pct:.0f}% of decode time but its memory was busy only "
                          f"{e.mem_util_pct:.0f}%: per-token work in small kernels and launches, not in reading weights")


def kernel_path(x: Inputs) -> Cause | None:
    cost = kernel_path_cost(x.engine, x.fmt, x.act_order)
    if cost is None:
        return None
    lost = (x.t_weights_ms + x.t_kv_ms) * (cost.decode_time_factor - 1)
    return Cause(CauseId.KERNEL_PATH, f"the kernel path of {cost.key} in {cost.engine} {cost.versions}", lost,
                 evidence={"decode_time_factor": cost.decode_time_factor, "engine": cost.engine, "versions": cost.versions,
                           "source": cost.source, "confidence": cost.confidence},
                 sentence=(f"{cost.engine} runs this format at {cost.decode_time_factor:g}x the ideal time per token "
                           f"({cost.card}, {'measured here' if cost.confidence == 'P' else 'published figure'})"
                           if cost.decode_time_factor > 1 else
                           f"measured: it costs nothing in {cost.engine} {cost.versions}"))


def contention(x: Inputs) -> Cause | None:
    if not x.evidence.competitors:
        return None
    return Cause(CauseId.GPU_CONTENTION, "other processes on the GPU during decode", None,
                 evidence={"processes": list(x.evidence.competitors)},
                 sentence=f"{len(x.evidence.competitors)} other process(es) held GPU memory during decode")


def estimate(x: Inputs) -> list[Cause]:
    """Every cause the evidence supports; host-bound gets only the idle time that PCIe does not explain."""
    found = [c for est in (kv_reads, throttled, offload, kernel_path) if (c := est(x)) is not None]
    pcie_ms = sum(c.lost_ms or 0 for c in found if c.id == CauseId.CPU_OFFLOAD)
    for c in (host_bound(x, pcie_ms), launch_bound(x), contention(x)):
        if c is not None:
            found.append(c)
    return found
