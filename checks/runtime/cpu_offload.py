"""`cpu-offload`: weights living in host memory, from four kinds of evidence.

1. the plan: a gpu_split smaller than the model's GPU bytes (model group's arithmetic);
2. the launch config: device_map / max_memory / offload settings (doctor/facts/engines/launch_config.py);
3. a running process: its VRAM (NVML) well below the model's GPU bytes while its RSS holds the rest;
4. under load: sustained host->GPU PCIe traffic, the signature of weights streamed every token.
Offloaded bytes cross PCIe every token, so the finding states the decode speed that caps.
"""

from __future__ import annotations

from dataclasses import dataclass

from checks.base import Check, CheckContext
from checks.runtime.context import hbm_gbs, model_bytes, pct, target_summary, value
from doctor.knowledge import pcie
from doctor.knowledge.arithmetic.decode_bytes import ceiling_tok_s
from doctor.knowledge.arithmetic.model_bytes import ModelBytes
from doctor.model.findings import Finding, Status
from doctor.model.ids import CheckId
from doctor.model.sample_summary import STREAMING_RX_MBS, GpuSummary
from doctor.model.samples import GpuSeries, SampleSeries
from doctor.model.units import GIB, MIB, gb

MIN_BUSY_SAMPLES = 5  # about a second at 5 Hz: less is not "sustained"
STREAMING_FRACTION = 0.5  # streaming in at least half the busy samples
BURST_MEAN_MBS = 1000.0
DEFICIT_MIN_BYTES = 512 * MIB  # VRAM short of the model by less than this is allocator noise
RSS_HOLDS_SHARE = 0.8  # the process's anonymous RSS must cover this share of the missing bytes


@dataclass(frozen=True)
class Clue:
    source: str  # plan | launch config | process | PCIe
    status: Status
    text: str
    offloaded_bytes: float | None = None


def _from_plan(ctx: CheckContext, mb: ModelBytes | None) -> list[Clue]:
    split = ctx.plan.gpu_split
    if not split or mb is None:
        return []
    room = sum(split) * GIB  # ExLlamaV2's gpu_split is GB x 1024^3 (model.py set_device_map)
    given = f"gpu_split {'+'.join(f'{x:g}' for x in split)} GB"
    if room >= mb.gpu_bytes:
        return [Clue("plan", Status.PASS, f"{given} covers the model's "
                     f"{gb(mb.gpu_bytes)} of GPU weights")]
    deficit = mb.gpu_bytes - room
    return [Clue("plan", Status.FAIL, f"{given} leaves {gb(deficit)} of the "
                 f"model's {gb(mb.gpu_bytes)} without a GPU: ExLlamaV2 stops with 'Insufficient space in device "
                 "allocation', and an offloading loader (accelerate device_map) would keep it in host RAM", deficit)]


def _from_config(ctx: CheckContext, mb: ModelBytes | None) -> list[Clue]:
    cfg = ctx.facts.launch_config
    if cfg is None:
        return []
    if cfg.error:
        return [Clue("launch config", Status.WARN, f"could not read the launch config: {cfg.error}")]
    if not cfg.hints:
        return [Clue("launch config", Status.PASS, f"{cfg.path}: no offload settings found")]
    clues = []
    for h in cfg.hints:
        where = f"{cfg.path}:{h.line} `{h.text}`"
        if h.gpu_gib is not None and mb is not None and h.gpu_gib * GIB < mb.gpu_bytes:
            deficit = mb.gpu_bytes - h.gpu_gib * GIB
            clues.append(Clue("launch config", Status.FAIL, f"{where}: {h.meaning}, {gb(deficit)} short of the model's "
                              f"{gb(mb.gpu_bytes)}, so that much goes to host RAM", deficit))
        elif h.offload == "certain":
            off = h.offload_gib * GIB if h.offload_gib else None
            clues.append(Clue("launch config", Status.FAIL, f"{where}: {h.meaning}", off))
        else:
            clues.append(Clue("launch config", Status.WARN, f"{where}: {h.meaning}"))
    return clues


def _watched_use(series: SampleSeries, g: GpuSeries) -> tuple[float | None, float | None, float | None]:
    """Watched processes' most VRAM (bytes), RSS and anonymous RSS (bytes) over the window."""
    family = set(series.watched_pids)
    per_sample = [sum(p.used_mib or 0.0 for p in s.processes if p.pid in family)
                  for s in g.samples if s.processes and any(p.pid in family for p in s.processes)]
    rss = anon = None
    for proc in series.processes:
        rss_s = [x.rss_mib for x in proc.samples if x.rss_mib is not None]
        anon_s = [x.rss_mib - (x.shared_mib or 0.0) for x in proc.samples if x.rss_mib is not None]
        if rss_s:
            rss = (rss or 0.0) + max(rss_s) * MIB
            anon = (anon or 0.0) + max(anon_s) * MIB
    return (max(per_sample) * MIB if per_sample else None), rss, anon


def _from_process(ctx: CheckContext, g: GpuSeries, mb: ModelBytes | None, evidence: dict) -> list[Clue]:
    series = ctx.facts.samples
    if series is None or not series.processes:
        return []
    vram, rss, anon = _watched_use(series, g)
    evidence.update(process_vram_bytes=vram, process_rss_bytes=rss, process_anonymous_rss_bytes=anon)
    pids = ", ".join(str(p.pid) for p in series.processes)
    if vram is None:
        return [Clue("process", Status.PASS, f"pid {pids} holds no memory on GPU {g.index} that NVML reports")] if mb is None else []
    if mb is None:
        return []
    host_by_design = mb.embedding_bytes  # ExLlamaV2 keeps the embedding in host RAM on purpose
    deficit = mb.gpu_bytes - vram
    if deficit < max(DEFICIT_MIN_BYTES, 0.05 * mb.gpu_bytes):
        return [Clue("process", Status.PASS, f"pid {pids} holds {gb(vram)} on the GPU, enough for the model's "
                     f"{gb(mb.gpu_bytes)} of weights")]
    if anon is not None and anon - host_by_design >= RSS_HOLDS_SHARE * deficit:
        return [Clue("process", Status.FAIL, f"pid {pids} holds {gb(vram)} on the GPU but the model needs "
                     f"{gb(mb.gpu_bytes)}; its {gb(anon)} of anonymous RSS holds the missing {gb(deficit)}", deficit)]
    return [Clue("process", Status.WARN, f"pid {pids} holds {gb(vram)} on the GPU, {gb(deficit)} less than the model's "
                 f"{gb(mb.gpu_bytes)}, and its RSS does not hold the rest: is that model loaded (yet)?")]


def _from_pcie(s: GpuSummary, link_gbs: float | None, evidence: dict) -> list[Clue]:
    evidence.update(pcie_rx_busy_median_mbs=s.pcie_rx_busy_median_mbs, pcie_rx_mean_mbs=s.pcie_rx_mean_mbs,
                    pcie_rx_max_mbs=s.pcie_rx_max_mbs, pcie_rx_streaming_fraction=s.pcie_rx_streaming_fraction,
                    pcie_source=s.pcie_source, busy_samples=s.busy_samples)
    if s.busy_samples < MIN_BUSY_SAMPLES or s.pcie_rx_busy_median_mbs is None:
        return []
    share = f" ({pct(s.pcie_rx_busy_median_mbs / 1000 / link_gbs)} of the link's ~{link_gbs} GB/s)" if link_gbs else ""
    if (s.pcie_rx_streaming_fraction or 0) >= STREAMING_FRACTION and s.pcie_rx_busy_median_mbs >= STREAMING_RX_MBS:
        return [Clue("PCIe", Status.FAIL, f"host->GPU traffic stayed high while the GPU worked: median "
                     f"{s.pcie_rx_busy_median_mbs / 1000:.2f} GB/s{share}, above {STREAMING_RX_MBS / 1000:g} GB/s in "
                     f"{pct(s.pcie_rx_streaming_fraction)} of {s.busy_samples} busy samples: weights are being streamed")]
    if s.pcie_rx_mean_mbs is not None and s.pcie_rx_mean_mbs >= BURST_MEAN_MBS:
        return [Clue("PCIe", Status.WARN, f"host->GPU bursts averaging {s.pcie_rx_mean_mbs / 1000:.2f} GB/s, not sustained "
                     "(model loading, or offload in bursts)")]
    return [Clue("PCIe", Status.PASS, f"host->GPU traffic while busy: median {s.pcie_rx_busy_median_mbs:.1f} MB/s "
                 "(commands and tokens only: no bulk transfer)")]


def _link(ctx: CheckContext, loaded: tuple[GpuSeries, GpuSummary] | None) -> tuple[str, float | None]:
    gpu = ctx.target_gpu()
    gen = width = None
    if loaded is not None and loaded[1].pcie_gen_busy_min is not None:
        gen, width = loaded[1].pcie_gen_busy_min, loaded[1].pcie_width_busy_min
    elif gpu is not None:
        gen, width = value(gpu.pcie_gen_max), value(gpu.pcie_width_max)
    if gen is None or width is None:
        return "PCIe link unknown", None
    return f"PCIe gen{gen} x{width}", pcie.practical_gbs(gen, width)


def _cost(offloaded: float, mb: ModelBytes | None, hbm: float | None, link_name: str, link_gbs: float | None) -> tuple[str, dict]:
    if not link_gbs:
        return "", {}
    resident = (mb.gpu_bytes - offloaded) if mb is not None else 0.0
    capped = pcie.decode_tok_s(max(0.0, resident), offloaded, hbm, link_gbs)
    ev = {"offloaded_bytes": round(offloaded), "decode_cap_tok_s_est": capped, "link_gbs_est": link_gbs}
    text = f"{gb(offloaded)} crossing {link_name} (~{link_gbs} GB/s, estimate) every token caps decode at ~{capped:.1f} tok/s"
    if mb is not None and hbm:
        ceiling = round(ceiling_tok_s(mb.gpu_bytes, hbm), 1)
        ev["ceiling_all_in_vram_tok_s"] = ceiling
        text += f", against ~{ceiling} tok/s with every weight in VRAM ({hbm:g} GB/s)"
    return text, ev


def run(ctx: CheckContext) -> Finding:
    loaded = target_summary(ctx)
    mb, mb_why = model_bytes(ctx)
    link_name, link_gbs = _link(ctx, loaded)
    evidence: dict = {"model_gpu_bytes": mb.gpu_bytes if mb else None, "model_size": mb.source if mb else mb_why,
                      "link": link_name}
    clues = _from_plan(ctx, mb) + _from_config(ctx, mb)
    if loaded is not None:
        clues += _from_process(ctx, loaded[0], mb, evidence) + _from_pcie(loaded[1], link_gbs, evidence)
    if not clues:
        return CHECK.finding(Status.SKIP, "nothing to judge offload by: run `v100-doctor watch --pid PID` on the "
                             "running server (optionally with --config and --model), or give --model with --gpu-split", evidence)
    evidence["clues"] = [f"[{c.status.value}] {c.source}: {c.text}" for c in clues]
    worst = max(clues, key=lambda c: {Status.PASS: 0, Status.WARN: 1, Status.FAIL: 2}[c.status])
    if worst.status == Status.PASS:
        return CHECK.finding(Status.PASS, "No sign of weights in host memory: " + "; ".join(c.text for c in clues), evidence)
    bad = [c for c in clues if c.status == worst.status]
    offloaded = next((c.offloaded_bytes for c in sorted(clues, key=lambda c: c.source != "process") if c.offloaded_bytes), None)
    cost, cost_ev = _cost(offloaded, mb, hbm_gbs(ctx.target_gpu(), loaded[0] if loaded else None), link_name,
                          link_gbs) if offloaded else ("", {})
    evidence.update(cost_ev)
    if offloaded is None and worst.status == Status.FAIL and link_gbs:
        cost = (f"Each GB streamed per token caps decode at ~{link_gbs:.1f} tok/s over {link_name} (estimate); how many "
                "GB are offloaded is unknown here: give --model so the doctor can compare")
        evidence["decode_cap_tok_s_per_offloaded_gb_est"] = link_gbs
    summary = "; ".join(c.text for c in bad) + (f". {cost}" if cost else "")
    fix = ("Keep every weight in VRAM: ExLlamaV2 never offloads layers, so load with it (EXL2), pick a quant whose "
           "weights fit (e.g. 3.75 instead of 4.25 bpw on a 16 GB card), free room with a shorter max_seq_len and a Q8 "
           "cache, and remove device_map='auto' / max_memory / cpu-offload settings from the launcher. Other "
           "processes holding VRAM push weights out too (see gpu-processes).")
    return CHECK.finding(worst.status, summary, evidence, fix)


CHECK = Check(id=CheckId("cpu-offload"), title="Weights or cache in host memory (CPU offload)", run=run, order=20)
