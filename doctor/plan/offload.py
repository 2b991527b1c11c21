"""A GGUF option that does not fit the card, planned with part of it in host RAM: the fewest routed-expert layers
kept on the CPU (llama.cpp --n-cpu-moe N, the same as -ot "blk\\.(0|..|N-1)\\.ffn_.*_exps\\.=CPU") for a MoE, or the
fewest whole layers (-ngl, Ollama's num_gpu) for a dense model; with the host RAM that takes and the speed when a
token's reads of those weights run at the host's memory bandwidth (doctor/knowledge/host_memory.py).

One card only: a split over several GPUs already spreads the layers.
"""

from __future__ import annotations

from dataclasses import replace

from doctor.engines import adapter
from doctor.engines.base import PlanRun
from doctor.knowledge.arithmetic import decode_time as dt
from doctor.knowledge.arithmetic.decode_bytes import read_ms
from doctor.knowledge.context_window import yarn_needed
from doctor.knowledge.cuda_context import context_bytes
from doctor.knowledge.decode_context import time_model_efficiency
from doctor.knowledge.engine_efficiency import family
from doctor.knowledge.gpus import GpuSpec
from doctor.knowledge.host_memory import HOST_BANDWIDTH_GBS, HOST_READ_SHARE, OLLAMA_OFFLOAD, PCIE_SOURCE, effective_host_gbs
from doctor.knowledge.quant_quality import quality
from doctor.model.quant_plan import Estimate, Offload, PlanRow, QuantCandidate
from doctor.model.units import gb
from doctor.plan import gguf_memory as gm
from doctor.plan.commands import commands
from doctor.plan.rows import Setting


def _ms(span: tuple[float, float, float]) -> Estimate:
    """(fast, mid, slow) milliseconds per token -> tok/s (low, mid, high)."""
    fast, mid, slow = span
    return Estimate(round(1000 / slow, 1), round(1000 / mid, 1), round(1000 / fast, 1), "", "K")


def _plan(s: Setting, c: QuantCandidate, card: GpuSpec, cache: str, context: int) -> tuple[str, int] | None:
    """(kind, count): the fewest expert layers (a MoE) or whole layers (dense) on the CPU that make it fit."""
    d = s.dims
    shape = gm.gguf_shape(d, c.download_bytes, c.bpw, c.gguf_type)
    cap = float(s.capacity_bytes(card))
    ctx = context_bytes("llama.cpp", card.cc)

    def fits(n: int, kind: str) -> bool:
        if kind == "experts":
            peak = gm.gpu_peaks(d, shape, context, cache, [cap], ctx, n)[0]
        else:
            peak = _dense_peak(s, shape, context, cache, cap, ctx, n)
        return peak + s.draft_bytes <= cap

    kind = "experts" if d.is_moe and shape.expert_bytes else "layers"
    top = d.moe_layers if kind == "experts" else d.layers
    if fits(0, kind) or not fits(top, kind):
        return None
    lo, hi = 1, top
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if fits(mid, kind) else (mid + 1, hi)
    return kind, lo


def _dense_peak(s: Setting, shape: gm.GgufShape, context: int, cache: str, cap: float, ctx: int, cpu_layers: int) -> int:
    """-ngl (layers - cpu_layers): those layers' weights and cache stay on the host; the output layer stays on the
    GPU (llama.cpp offloads it with the last layers)."""
    d = s.dims
    full = gm.gpu_peaks(d, shape, context, cache, [cap], ctx)[0]
    head = d.vocab * d.hidden * shape.bpw / 8 if not d.tied else 0
    per_layer = (shape.gpu_weight_bytes - head) / d.layers + gm.kv_bytes(d, context, cache) / d.layers
    return int(full - cpu_layers * per_layer)


def offload_row(s: Setting, c: QuantCandidate, card: GpuSpec, cache: str, context: int) -> PlanRow | None:
    """The row for `c` with the least of it in host RAM that fits `card` at `context`; None when it fits whole
    or does not fit even with every expert (or every layer) on the CPU."""
    found = _plan(s, c, card, cache, context)
    if found is None:
        return None
    kind, n = found
    d = s.dims
    shape = gm.gguf_shape(d, c.download_bytes, c.bpw, c.gguf_type)
    cap = s.capacity_bytes(card)
    ctx = context_bytes("llama.cpp", card.cc)
    emb = int(shape.embedding_params * shape.bpw / 8)
    if kind == "experts":
        peak = gm.gpu_peaks(d, shape, context, cache, [float(cap)], ctx, n)[0]
        host = int(n * gm.expert_layer_bytes(d, shape))
        host_read = gm.host_read_bytes(d, shape, n)
        gpu_read = gm.gpu_read_shares(d, shape, 0, cache, [float(cap)], n)[0]
        gpu_layers_kv = d.layers
        flag = f" --n-cpu-moe {n}"
        how = (f"llama.cpp: --n-cpu-moe {n} (or -ot \"blk\\.({'|'.join(str(i) for i in range(n))})\\.ffn_.*_exps\\.=CPU\"); "
               + OLLAMA_OFFLOAD)
        label = f"{c.label}, experts of {n} layer{'s' if n > 1 else ''} in host RAM"
    else:
        head = d.vocab * d.hidden * shape.bpw / 8 if not d.tied else 0
        per_layer = (shape.gpu_weight_bytes - head) / d.layers
        peak = _dense_peak(s, shape, context, cache, float(cap), ctx, n)
        host = int(n * per_layer)
        host_read = host
        gpu_read = gm.gpu_read_shares(d, shape, 0, cache, [float(cap)])[0] - host
        gpu_layers_kv = d.layers - n
        flag = ""
        how = (f"llama.cpp: -ngl {d.layers - n} ({n} of {d.layers} layers on the CPU); Ollama: "
               f"PARAMETER num_gpu {d.layers - n} in a Modelfile (or \"options\": {{\"num_gpu\": {d.layers - n}}})")
        label = f"{c.label}, {n} of {d.layers} layers in host RAM"
    eff, note = time_model_efficiency("llama.cpp", family(card.cc, card.fp16_slow), c.gguf_type)
    w = read_ms(gpu_read, card.bandwidth_gbs)
    slow_h, mid_h, fast_h = effective_host_gbs()
    h = [host_read / (g * 1e9) * 1000 for g in (fast_h, mid_h, slow_h)]

    def at(past: int) -> Estimate:
        kv = dt.llama_context_ms(d, past, cache, gpu_layers_kv, card.bandwidth_gbs, card.key)
        e = _ms((w / eff.high + h[0] + kv.fast, w / eff.mid + h[1] + kv.mid, w / eff.low + h[2] + kv.slow))
        src = (f"GPU part: bandwidth time / {eff.mid:g} ({eff.low:g}-{eff.high:g}), {eff.source}"
               + (f" ({note})" if note else "") + f"; host part: {gb(host_read, 2)} a token at "
               f"{HOST_BANDWIDTH_GBS.low:g}-{HOST_BANDWIDTH_GBS.high:g} GB/s x {HOST_READ_SHARE.low:g}-"
               f"{HOST_READ_SHARE.high:g} ({HOST_BANDWIDTH_GBS.what}; {HOST_READ_SHARE.source}); {PCIE_SOURCE}")
        return replace(e, source=src)

    speed, speed_full = at(context // 2), at(context)
    q, q_source = quality(c.fmt, c.bpw, c.gguf_type, s.family)
    steps = commands(adapter("llama.cpp"), PlanRun(c, s.base_repo, context, cache, None, s.draft_name, card.cc,
                                                           yarn_needed(s.config, context)))
    if "run" in steps:  # (a model without a Hub id has no run step: nothing to launch)
        run = steps["run"]
        steps["run"] = run.replace(" -ngl 999", f" -ngl {d.layers - n}") if kind == "layers" else run + flag
    option = replace(c, label=label)
    offload = Offload(kind, n, host + emb, host_read, how,
                      "llama.cpp common/arg.cpp --n-cpu-moe; " + PCIE_SOURCE)
    ceiling = 1000 / (read_ms(gpu_read, card.bandwidth_gbs) + host_read / (HOST_BANDWIDTH_GBS.mid * 1e6))
    return PlanRow(option, "llama.cpp", (card.key,), cache, context, True, (int(peak) + s.draft_bytes,), (cap,),
                   s.draft_bytes, round(ceiling, 1), speed, speed_full, context, 1, q, q_source, steps, "",
                   offload=offload)


def offload_rows(s: Setting, candidates: list[QuantCandidate], cards: tuple[GpuSpec, ...], caches: tuple[str, ...],
                 context: int) -> list[PlanRow]:
    """An offload row for each GGUF option and cache that does not fit the one card whole."""
    if len(cards) != 1:
        return []
    return [r for c in candidates if c.fmt == "gguf" for cache in caches
            if (r := offload_row(s, c, cards[0], cache, context)) is not None]


def offload_notes(rows: list[PlanRow]) -> list[str]:
    """One sentence per offloaded option (its fastest cache): how much stays in host RAM, the flag, the speed."""
    best: dict[tuple[str, str], PlanRow] = {}
    for r in rows:
        if r.offload is not None:
            key = (r.cards[0], r.option.label.split(",")[0])
            if key not in best or r.speed.mid > best[key].speed.mid:
                best[key] = r
    out = []
    for (card, label), r in best.items():
        o = r.offload
        assert o is not None
        what = "the routed experts of" if o.kind == "experts" else "whole"
        out.append(f"{label} does not fit whole on {card}: with {what} {o.layers} layer{'s' if o.layers > 1 else ''} "
                   f"in host RAM it takes {gb(r.peak_bytes[0], 1)} of the card and {gb(o.host_bytes, 1)} of host RAM "
                   f"(with the token embedding; mmap'd from the file), and decodes at about {r.speed.mid:g} tok/s "
                   f"({r.speed.low:g}-{r.speed.high:g}, an estimate: {gb(o.host_read_bytes, 2)} a token read at the "
                   f"host's memory bandwidth, which the plan assumes) with the {r.cache} cache; {o.how}")
    return out
