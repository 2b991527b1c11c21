"""One plan row: a quantized version x engine x cache type x context on one card or a split over several.

ExLlamaV2 options (EXL2, GPTQ) reuse the doctor's ExLlamaV2 budget (doctor/knowledge/arithmetic/vram_budget.py) and decode
arithmetic (doctor/knowledge/arithmetic/decode_bytes.py); GGUF options use llama.cpp's buffers (doctor/plan/gguf_memory.py).
Expected speed = 1000 / the time per token of doctor/knowledge/arithmetic/decode_time.py: the bytes read at bandwidth over the
engine's efficiency on that architecture, plus the engine's context terms (doctor/knowledge/decode_context.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from doctor.engines import ADAPTERS, EngineAdapter, adapter
from doctor.engines.base import PlanRun, PlanSetup
from doctor.knowledge import decode_fixed_cost as fc
from doctor.knowledge.arithmetic import decode_time as dt
from doctor.knowledge.arithmetic.decode_bytes import read_ms
from doctor.knowledge.arithmetic.model_bytes import ModelBytes, ModelDims, model_bytes
from doctor.knowledge.arithmetic.vram_budget import SEQ_STEP, GpuRoom, largest_fitting_seq_len, plan_budget
from doctor.knowledge.context_window import yarn_needed
from doctor.knowledge.cuda_context import context_bytes
from doctor.knowledge.decode_context import time_model_efficiency
from doctor.knowledge.engine_efficiency import Efficiency, family
from doctor.knowledge.engines import TRANSFORMERS_BNB_NF4
from doctor.knowledge.exllamav2_memory import NVML_TOTAL_MIB, PLANNING_FALLBACK_FRACTION, cuda_context_bytes
from doctor.knowledge.gpus import GpuSpec
from doctor.knowledge.kv_cache import KV_CACHE_MODES
from doctor.knowledge.quant_quality import model_family, quality
from doctor.model.model_dir import ModelConfig, ModelFacts, QuantFacts
from doctor.model.quant_plan import Estimate, PlanRow, QuantCandidate
from doctor.model.units import MIB, gb
from doctor.plan import gguf_memory as gm
from doctor.plan.commands import commands


def planned_engines() -> tuple[EngineAdapter, ...]:
    """The engines with rows in a plan (their adapters' PlanSetup), in the registry's order."""
    return tuple(a for a in ADAPTERS.values() if a.plan is not None)


def _setup(engine: str) -> PlanSetup:
    setup = adapter(engine).plan
    if setup is None:
        raise KeyError(f"{engine} has no rows in a plan")
    return setup


def arithmetic(engine: str) -> str:
    """Whose memory and speed arithmetic the engine's rows follow: "exllamav2", "llama.cpp" or "torch"."""
    return _setup(engine).arithmetic


def engines_for(c: QuantCandidate) -> tuple[EngineAdapter, ...]:
    return tuple(a for a in planned_engines() if a.plan_takes(c))


@dataclass(frozen=True)
class Setting:
    """What every row of one plan shares: the model's shape, the cards, the draft model."""

    config: ModelConfig
    dims: ModelDims
    cards: tuple[GpuSpec, ...]
    draft_bytes: int = 0
    draft_name: str | None = None
    base_repo: str | None = None
    exl2_flash_attn: bool | None = None  # None: as TabbyAPI installs it (sm_80+); False: measured without it

    def flash_attn(self, spec: GpuSpec) -> bool:
        return dt.exl2_flash_attn(spec.cc) if self.exl2_flash_attn is None else self.exl2_flash_attn

    def capacity_bytes(self, spec: GpuSpec) -> int:
        mib = NVML_TOTAL_MIB.get(spec.key, (spec.memory_gb * 1024 * PLANNING_FALLBACK_FRACTION,))[0]
        return int(mib * MIB)

    @property
    def family(self) -> str:
        """Whose published quality figures apply (doctor/knowledge/quant_quality.py): Llama-3's, or none."""
        return model_family(self.config.model_type, self.config.vocab_size)

    @property
    def upper_context(self) -> int:
        mpe = self.config.max_position_embeddings
        return mpe if isinstance(mpe, int) and mpe > 0 else 131072


def caches(engine: str) -> tuple[str, ...]:
    return _setup(engine).caches


def _speed(weights_ms: list[float], context_ms: dt.Span, engine: str, cards: tuple[GpuSpec, ...], cache: str,
           s: Setting, gguf_type: str | None = None) -> Estimate:
    """1000 / (the weights' time + the context term). The slowest card's family decides the efficiency (a split runs
    the GPUs one after another); the least certain part decides the confidence. llama.cpp's weights' time is the
    products at their share of the bandwidth plus fixed costs per layer and per token (doctor/knowledge/
    decode_fixed_cost.py) where its family has them; ExLlamaV2's is the bytes over its efficiency."""
    rows = [time_model_efficiency(engine, family(c.cc, c.fp16_slow), gguf_type) for c in cards]
    eff, note = min(rows, key=lambda r: r[0].mid)
    w = sum(weights_ms)
    fixed = _llama_times(w, eff, cards, s.dims.layers, gguf_type) if engine == "llama.cpp" else None
    ms = (dt.Span(fixed[0].fast, fixed[0].mid, fixed[0].slow) if fixed else dt.Span(w / eff.high, w / eff.mid, w / eff.low)) \
        + context_ms
    slowest = min(cards, key=lambda c: c.bandwidth_gbs)
    what, src, conf = dt.context_term(engine, cache, slowest.cc, slowest.key, s.flash_attn(slowest))
    confidence = "K" if note or "K" in (conf, eff.confidence) or (fixed and fixed[2] == "K") else eff.confidence
    how = fixed[1] if fixed else f"bandwidth time / {eff.mid:g} ({eff.low:g}-{eff.high:g}): {eff.how}; {eff.source}"
    return Estimate(round(1000 / ms.slow, 1), round(1000 / ms.mid, 1), round(1000 / ms.fast, 1),
                    how + (f" ({note})" if note else "") + f"; context: {what} ({src})", confidence)


def _llama_times(w: float, eff: Efficiency, cards: tuple[GpuSpec, ...], layers: int,
                 gguf_type: str | None) -> tuple[fc.Times, str, str] | None:
    """llama.cpp's weights' time with its fixed costs: the H200's fits on Hopper, else the family's efficiency turned
    into a share at its anchor shape ((times, how, confidence); None where the family has no anchor)."""
    if eff.family == "hopper":
        return fc.h200_times(w, layers, gguf_type), f"{fc.H200_HOW}; {fc.RESULTS}", "P"
    slowest = min(cards, key=lambda c: c.bandwidth_gbs)
    t = fc.elsewhere_times(w, layers, slowest.bandwidth_gbs, eff.family, eff.low, eff.mid, eff.high)
    if t is None:
        return None
    return t, (f"{eff.how} ({eff.low:g}-{eff.high:g} of the ceiling there; {eff.source}), carried to this shape with "
               f"{fc.ELSEWHERE} ({fc.RESULTS})"), "K"


def exl2_bytes(s: Setting, c: QuantCandidate) -> ModelBytes:
    return _exl2_bytes(s.config, c)


@lru_cache(maxsize=256)  # every cache type and card of an option asks for the same bytes (fit: the whole catalogue)
def _exl2_bytes(config: ModelConfig, c: QuantCandidate) -> ModelBytes:
    method = "fp16" if c.fmt == "fp16" else c.fmt
    quant = QuantFacts(method=method, declared_in="plan", bits=c.bpw if c.bpw else 16.0,
                       group_size=c.group_size or 128, desc_act=False)
    return model_bytes(ModelFacts(path=c.label, exists=False, kind="planned", config=config, quant=quant))


def exl2_row(s: Setting, c: QuantCandidate, cards: tuple[GpuSpec, ...], cache: str, context: int,
             engine: str = "exllamav2", longest: bool = True) -> PlanRow:
    d, mb = s.dims, exl2_bytes(s, c)
    caps = [s.capacity_bytes(g) for g in cards]
    rooms = [GpuRoom(i, g.name, (caps[i] - (s.draft_bytes if i == 0 else 0)) / MIB, caps[i] / MIB, measured=False)
             for i, g in enumerate(cards)]
    ctx_bytes = cuda_context_bytes(cards[0].cc)
    quantized = c.fmt != "fp16"
    budget = plan_budget(mb, d, rooms, context, cache, None, quantized, ctx_bytes)
    peaks = tuple(dev.peak_bytes + (s.draft_bytes if dev.index == 0 else 0) for dev in budget.devices)
    most = largest_fitting_seq_len(mb, d, rooms, cache, None, quantized, s.upper_context, ctx_bytes) if longest else 0

    def times_at(past: int) -> list[float]:
        """Each GPU's read time (weights, cache, the repeat_kv copy without flash-attn) and the embedding row."""
        return [read_ms(dev.read_weight_bytes + dev.layers * dt.exl2_layer_bytes(
                    d, past, cache, s.flash_attn(cards[dev.index])), cards[dev.index].bandwidth_gbs)
                for dev in budget.devices if dev.components["weights"]] + \
            [read_ms(mb.embedding_row_bytes, cards[0].bandwidth_gbs)]

    half = times_at(context // 2)
    full = times_at(context) if longest else half
    ceiling = (1000 / sum(half), 1000 / sum(full))
    speed = _speed(half, dt.ZERO, "exllamav2", cards, cache, s)
    speeds = (speed, _speed(full, dt.ZERO, "exllamav2", cards, cache, s) if longest else speed)
    per_stream = KV_CACHE_MODES[cache].bytes_per_token(d.layers, d.kv_heads, d.head_dim) * context
    why = ""
    if not budget.fits:
        over = -budget.margin_bytes
        why = (f"{budget.unplaced_layers} of {d.layers} layers do not fit" if budget.unplaced_layers else
               f"{gb(over, 2)} over on GPU {min(budget.devices, key=lambda x: x.margin_bytes).index}")
    return _row(s, c, engine, cards, cache, context, budget.fits, peaks, tuple(caps), ceiling, speeds, most,
                per_stream, sum(max(0, dev.margin_bytes) for dev in budget.devices), why,
                None)  # TabbyAPI's autosplit: the budget places whole layers GPU by GPU as it does


def gguf_row(s: Setting, c: QuantCandidate, cards: tuple[GpuSpec, ...], cache: str, context: int,
             engine: str = "llama.cpp", longest: bool = True) -> PlanRow:
    d = s.dims
    shape = gm.gguf_shape(d, c.download_bytes, c.bpw, c.gguf_type)
    caps = [s.capacity_bytes(g) for g in cards]
    ctx_bytes = context_bytes("llama.cpp", cards[0].cc)

    def peaks_at(n: int) -> list[int]:
        p = gm.gpu_peaks(d, shape, n, cache, [float(x) for x in caps], ctx_bytes)
        return [v + (s.draft_bytes if i == 0 else 0) for i, v in enumerate(p)]

    def fits(n: int) -> bool:
        return all(p <= cap for p, cap in zip(peaks_at(n), caps))

    peaks = peaks_at(context)
    ok = all(p <= cap for p, cap in zip(peaks, caps))  # fits(context), from the peaks just made
    lo, hi = 0, s.upper_context // SEQ_STEP if longest else 0
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if fits(mid * SEQ_STEP) else (lo, mid - 1)

    def ceiling_at(past: int) -> float:
        shares = gm.gpu_read_shares(d, shape, past, cache, [float(x) for x in caps])
        return 1000 / sum(read_ms(b, g.bandwidth_gbs) for b, g in zip(shares, cards) if b)

    def speed_at(past: int) -> Estimate:
        weights = gm.gpu_read_shares(d, shape, 0, cache, [float(x) for x in caps])
        layers = gm.split_layers(d.layers, [float(x) for x in caps])
        ctx = dt.ZERO
        for n, g in zip(layers, cards):
            ctx = ctx + dt.llama_context_ms(d, past, cache, n, g.bandwidth_gbs, g.key)
        return _speed([read_ms(b, g.bandwidth_gbs) for b, g in zip(weights, cards) if b], ctx, "llama.cpp", cards,
                      cache, s, c.gguf_type)

    ceiling = (ceiling_at(context // 2), ceiling_at(context) if longest else 0.0)
    speed = speed_at(context // 2)
    speeds = (speed, speed_at(context) if longest else speed)
    per_stream = gm.kv_bytes(d, context, cache)
    margin = sum(max(0, cap - p) for p, cap in zip(peaks, caps))
    worst = max(range(len(caps)), key=lambda i: peaks[i] - caps[i])
    why = "" if ok else f"{gb(peaks[worst] - caps[worst], 2)} over on GPU {worst}"
    split = tuple(round(x / 2 ** 30, 1) for x in caps) if len(cards) > 1 else None
    return _row(s, c, engine, cards, cache, context, ok, tuple(peaks), tuple(caps), ceiling, speeds, lo * SEQ_STEP,
                per_stream, margin, why, split)


def _torch_efficiency(engine: str, cards: tuple[GpuSpec, ...]) -> tuple[float, float, float, str, str]:
    """(low, mid, high share of the ceiling, how, confidence) for an engine on torch: Transformers + bitsandbytes NF4's
    measured cost (the reference story); vLLM has no measured figure here, so ExLlamaV2's is assumed (vLLM's GPTQ path
    below Ampere runs kernels derived from ExLlamaV2's), K."""
    if _setup(engine).speed == "bnb-nf4":
        t = TRANSFORMERS_BNB_NF4
        share = 1 / t.decode_time_factor
        return share * 0.8, share, share * 1.2, f"1/{t.decode_time_factor:g} of the ceiling: {t.what}; {t.source}", t.confidence
    slowest = min(cards, key=lambda c: c.bandwidth_gbs)
    eff, note = time_model_efficiency("exllamav2", family(slowest.cc, slowest.fp16_slow))
    return (eff.low, eff.mid, eff.high, f"no measured vLLM figure: ExLlamaV2's ({eff.how}; {eff.source}) is assumed"
            + (f" ({note})" if note else ""), "K")


def torch_row(s: Setting, c: QuantCandidate, cards: tuple[GpuSpec, ...], cache: str, context: int,
              engine: str) -> PlanRow:
    """An engine on torch (vLLM, Transformers): the weights as the version stores them, the token embedding on the GPU
    too, an FP16 K/V cache at the context and the CUDA context, within the share of the card the engine takes
    (vLLM's --gpu-memory-utilization). Its activation peak and CUDA graphs are not modelled: an estimate. One card."""
    d, card = s.dims, cards[0]
    method = c.fmt if c.fmt in ("gptq", "awq", "bnb-4bit") else "fp16"
    bits = c.bpw if method in ("gptq", "awq") and c.bpw else 4.0 if method == "bnb-4bit" else 16.0
    quant = QuantFacts(method=method, declared_in="plan", bits=bits, group_size=c.group_size or 128, desc_act=False)
    mb = model_bytes(ModelFacts(path=c.label, exists=False, kind="planned", config=s.config, quant=quant))
    weights = mb.gpu_bytes + mb.embedding_bytes
    per_token = KV_CACHE_MODES[cache].bytes_per_token(d.layers, d.kv_heads, d.head_dim)
    cap = s.capacity_bytes(card)
    room = int(cap * _setup(engine).memory_share) - s.draft_bytes - cuda_context_bytes(card.cc)
    peak = weights + per_token * context + cuda_context_bytes(card.cc) + s.draft_bytes
    fits = weights + per_token * context <= room
    longest = max(0, min(s.upper_context, (room - weights) // per_token // SEQ_STEP * SEQ_STEP)) if per_token else 0
    low, mid, high, how, confidence = _torch_efficiency(engine, cards)

    def at(past: int) -> tuple[float, Estimate]:
        ceiling = 1000 / read_ms(weights + per_token * past, card.bandwidth_gbs)
        return ceiling, Estimate(round(ceiling * low, 1), round(ceiling * mid, 1), round(ceiling * high, 1),
                                 f"bandwidth time / {mid:.3g} ({low:.3g}-{high:.3g}): {how}", confidence)

    (ceil_half, half), (ceil_full, full) = at(context // 2), at(context)
    why = "" if fits else f"{gb(weights + per_token * context - room, 2)} over on GPU 0"
    return _row(s, c, engine, cards, cache, context, fits, (peak,), (cap,), (ceil_half, ceil_full), (half, full),
                longest, per_token * context, max(0, room - weights - per_token * context), why, None)


def _row(s: Setting, c: QuantCandidate, engine: str, cards: tuple[GpuSpec, ...], cache: str, context: int, fits: bool,
         peaks: tuple[int, ...], caps: tuple[int, ...], ceiling: tuple[float, float], speeds: tuple[Estimate, Estimate],
         longest: int, per_stream: int, margin: int, why: str, split: tuple[float, ...] | None) -> PlanRow:
    """`ceiling`, `speeds`: (at half the context in the cache, at the full context)."""
    speed, speed_full = speeds
    q, q_source = quality(c.fmt, c.bpw, c.gguf_type, s.family)
    streams = (1 + int(margin // per_stream)) if fits and per_stream else 0
    steps = commands(adapter(engine), PlanRun(c, s.base_repo, context, cache, split, s.draft_name, cards[0].cc,
                                                yarn_needed(s.config, context)))
    return PlanRow(c, engine, tuple(g.key for g in cards), cache, context, fits, peaks, caps, s.draft_bytes,
                   round(ceiling[0], 1), speed, speed_full, longest, streams, q, q_source, steps, why)


def row(s: Setting, c: QuantCandidate, cards: tuple[GpuSpec, ...], cache: str, context: int,
        engine: str | None = None, longest: bool = True) -> PlanRow:
    """The row of version `c` on `engine` (default: the first engine that plans its format). `longest=False`: a
    first look (fit's sweep of the whole catalogue, doctor/plan/best.py): fits, peak and the speed with half the
    context in the cache, without the longest-context search (max_context 0) or the full-context speed (the same)."""
    engine = engine or str(engines_for(c)[0].id)
    kind = arithmetic(engine)
    if kind == "llama.cpp":
        return gguf_row(s, c, cards, cache, context, engine, longest)
    if kind == "torch":
        return torch_row(s, c, cards, cache, context, engine)
    return exl2_row(s, c, cards, cache, context, engine, longest)




def context_cost(s: Setting, r: PlanRow, cards: tuple[GpuSpec, ...], past: int) -> str:
    """What the row's context term costs per token with `past` tokens in the cache, in words and milliseconds ("" when
    it has none worth saying: ExLlamaV2 with flash-attn, llama.cpp's f16 cache at the bandwidth)."""
    d, card = s.dims, min(cards, key=lambda c: c.bandwidth_gbs)
    ms_total = 1000 / r.speed.mid if r.speed.mid else 0.0
    if r.engine == "exllamav2":
        if s.flash_attn(card):
            return ""
        eff, _ = time_model_efficiency("exllamav2", family(card.cc, card.fp16_slow))
        copy = d.layers * dt.exl2_copy_bytes(d, past, False)
        return (f"without flash-attn (sm_{card.cc.replace('.', '')}) ExLlamaV2 copies K and V to each of the "
                f"{d.heads // max(1, d.kv_heads)} query heads that share them, {gb(copy, 1)} more moved per token: "
                f"{read_ms(copy, card.bandwidth_gbs) / eff.mid:.1f} of its {ms_total:.1f} ms")
    if r.cache in dt.LLAMA_QUANT_CACHES:
        ms = dt.llama_context_ms(d, past, r.cache, d.layers, card.bandwidth_gbs, card.key)
        return (f"llama.cpp's {r.cache} cache costs {ms.mid:.1f} ms ({ms.fast:.1f}-{ms.slow:.1f}) of its "
                f"{ms_total:.1f} ms per token, dequantized in flash attention"
                + ("" if dt.measured_card(card.key) else " (scaled from the H200 by bandwidth, an estimate)"))
    return ""
