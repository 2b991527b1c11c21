"""One plan row: a quantized version x engine x cache type x context on one card or a split over several.

ExLlamaV2 options (EXL2, GPTQ) reuse the doctor's ExLlamaV2 budget (checks/arithmetic/vram_budget.py) and decode
arithmetic (checks/arithmetic/decode_bytes.py); GGUF options use llama.cpp's buffers (checks/plan/gguf_memory.py).
Expected speed = the ceiling x the engine's efficiency on that architecture (checks/knowledge/engine_efficiency.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from checks.arithmetic.decode_bytes import kv_read_bytes as exl2_kv_read
from checks.arithmetic.decode_bytes import read_ms
from checks.arithmetic.model_bytes import ModelBytes, ModelDims, model_bytes
from checks.arithmetic.vram_budget import SEQ_STEP, GpuRoom, largest_fitting_seq_len, plan_budget
from checks.knowledge.engine_efficiency import efficiency, family
from checks.knowledge.exllamav2_memory import NVML_TOTAL_MIB, PLANNING_FALLBACK_FRACTION, cuda_context_bytes
from checks.knowledge.gpus import GpuSpec
from checks.knowledge.kv_cache import KV_CACHE_MODES
from checks.knowledge.quant_quality import quality
from checks.plan import gguf_memory as gm
from checks.plan.commands import download, llama_server, tabby_config
from doctor.model.model_dir import ModelConfig, ModelFacts, QuantFacts
from doctor.model.quant_plan import Estimate, PlanRow, QuantCandidate
from doctor.model.units import MIB, gb

EXL2_CACHES = ("fp16", "q8", "q6", "q4")
GGUF_CACHES = ("f16", "q8_0", "q4_0")
ENGINE_OF = {"exl2": "exllamav2", "gptq": "exllamav2", "fp16": "exllamav2", "gguf": "llama.cpp"}


@dataclass(frozen=True)
class Setting:
    """What every row of one plan shares: the model's shape, the cards, the draft model."""

    config: ModelConfig
    dims: ModelDims
    cards: tuple[GpuSpec, ...]
    draft_bytes: int = 0
    draft_name: str | None = None
    base_repo: str | None = None

    def capacity_bytes(self, spec: GpuSpec) -> int:
        mib = NVML_TOTAL_MIB.get(spec.key, (spec.memory_gb * 1024 * PLANNING_FALLBACK_FRACTION,))[0]
        return int(mib * MIB)

    @property
    def upper_context(self) -> int:
        mpe = self.config.max_position_embeddings
        return mpe if isinstance(mpe, int) and mpe > 0 else 131072


def caches(engine: str) -> tuple[str, ...]:
    return EXL2_CACHES if engine == "exllamav2" else GGUF_CACHES


def _speed(ceiling: float, engine: str, cards: tuple[GpuSpec, ...]) -> tuple[Estimate, str]:
    """The slowest card's family decides (a split runs the GPUs one after another)."""
    rows = [efficiency(engine, family(c.cc, c.fp16_slow)) for c in cards]
    eff, note = min(rows, key=lambda r: r[0].mid)
    return Estimate(round(ceiling * eff.low, 1), round(ceiling * eff.mid, 1), round(ceiling * eff.high, 1),
                    f"ceiling x {eff.mid:g} ({eff.low:g}-{eff.high:g}): {eff.how}; {eff.source}"
                    + (f" ({note})" if note else ""), "K" if note else eff.confidence), note


def exl2_bytes(s: Setting, c: QuantCandidate) -> ModelBytes:
    method = "fp16" if c.fmt == "fp16" else c.fmt
    quant = QuantFacts(method=method, declared_in="plan", bits=c.bpw if c.bpw else 16.0,
                       group_size=c.group_size or 128, desc_act=False)
    return model_bytes(ModelFacts(path=c.label, exists=False, kind="planned", config=s.config, quant=quant))


def exl2_row(s: Setting, c: QuantCandidate, cards: tuple[GpuSpec, ...], cache: str, context: int) -> PlanRow:
    d, mb = s.dims, exl2_bytes(s, c)
    caps = [s.capacity_bytes(g) for g in cards]
    rooms = [GpuRoom(i, g.name, (caps[i] - (s.draft_bytes if i == 0 else 0)) / MIB, caps[i] / MIB, measured=False)
             for i, g in enumerate(cards)]
    ctx_bytes = cuda_context_bytes(cards[0].cc)
    quantized = c.fmt != "fp16"
    budget = plan_budget(mb, d, rooms, context, cache, None, quantized, ctx_bytes)
    peaks = tuple(dev.peak_bytes + (s.draft_bytes if dev.index == 0 else 0) for dev in budget.devices)
    longest = largest_fitting_seq_len(mb, d, rooms, cache, None, quantized, s.upper_context, ctx_bytes)

    def ceiling_at(past: int) -> float:
        kv_layer = exl2_kv_read(1, d.kv_heads, d.head_dim, past, cache)
        shares = [(dev.components["weights"] + dev.layers * kv_layer, cards[dev.index].bandwidth_gbs)
                  for dev in budget.devices if dev.components["weights"]]
        return 1000 / (sum(read_ms(b, bw) for b, bw in shares) + read_ms(mb.embedding_row_bytes, cards[0].bandwidth_gbs))

    ceiling = (ceiling_at(context // 2), ceiling_at(context))
    per_stream = KV_CACHE_MODES[cache].bytes_per_token(d.layers, d.kv_heads, d.head_dim) * context
    why = ""
    if not budget.fits:
        over = -budget.margin_bytes
        why = (f"{budget.unplaced_layers} of {d.layers} layers do not fit" if budget.unplaced_layers else
               f"{gb(over, 2)} over on GPU {min(budget.devices, key=lambda x: x.margin_bytes).index}")
    return _row(s, c, "exllamav2", cards, cache, context, budget.fits, peaks, tuple(caps), ceiling, longest,
                per_stream, sum(max(0, dev.margin_bytes) for dev in budget.devices), why,
                tabby_config(c, context, cache, None, s.draft_name))


def gguf_row(s: Setting, c: QuantCandidate, cards: tuple[GpuSpec, ...], cache: str, context: int) -> PlanRow:
    d = s.dims
    shape = gm.gguf_shape(d, c.download_bytes, c.bpw, c.gguf_type)
    caps = [s.capacity_bytes(g) for g in cards]
    ctx_bytes = cuda_context_bytes(cards[0].cc)

    def peaks_at(n: int) -> list[int]:
        p = gm.gpu_peaks(d, shape, n, cache, [float(x) for x in caps], ctx_bytes)
        return [v + (s.draft_bytes if i == 0 else 0) for i, v in enumerate(p)]

    def fits(n: int) -> bool:
        return all(p <= cap for p, cap in zip(peaks_at(n), caps))

    peaks = peaks_at(context)
    ok = fits(context)
    lo, hi = 0, s.upper_context // SEQ_STEP
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if fits(mid * SEQ_STEP) else (lo, mid - 1)

    def ceiling_at(past: int) -> float:
        shares = gm.gpu_read_shares(d, shape, past, cache, [float(x) for x in caps])
        return 1000 / sum(read_ms(b, g.bandwidth_gbs) for b, g in zip(shares, cards) if b)

    ceiling = (ceiling_at(context // 2), ceiling_at(context))
    per_stream = gm.kv_bytes(d, context, cache)
    margin = sum(max(0, cap - p) for p, cap in zip(peaks, caps))
    worst = max(range(len(caps)), key=lambda i: peaks[i] - caps[i])
    why = "" if ok else f"{gb(peaks[worst] - caps[worst], 2)} over on GPU {worst}"
    split = tuple(round(x / 2 ** 30, 1) for x in caps) if len(cards) > 1 else None
    return _row(s, c, "llama.cpp", cards, cache, context, ok, tuple(peaks), tuple(caps), ceiling, lo * SEQ_STEP,
                per_stream, margin, why, llama_server(c, context, cache, split, s.draft_name))


def _row(s: Setting, c: QuantCandidate, engine: str, cards: tuple[GpuSpec, ...], cache: str, context: int, fits: bool,
         peaks: tuple[int, ...], caps: tuple[int, ...], ceiling: tuple[float, float], longest: int, per_stream: int,
         margin: int, why: str, config: str) -> PlanRow:
    """`ceiling`: (at half the context in the cache, at the full context)."""
    speed, _ = _speed(ceiling[0], engine, cards)
    speed_full, _ = _speed(ceiling[1], engine, cards)
    q, q_source = quality(c.fmt, c.bpw, c.gguf_type)
    streams = (1 + int(margin // per_stream)) if fits and per_stream else 0
    commands = {"download": download(c, s.base_repo), "config" if engine == "exllamav2" else "run": config}
    return PlanRow(c, engine, tuple(g.key for g in cards), cache, context, fits, peaks, caps, s.draft_bytes,
                   round(ceiling[0], 1), speed, speed_full, longest, streams, q, q_source, commands, why)


def row(s: Setting, c: QuantCandidate, cards: tuple[GpuSpec, ...], cache: str, context: int) -> PlanRow:
    if ENGINE_OF.get(c.fmt) == "llama.cpp":
        return gguf_row(s, c, cards, cache, context)
    return exl2_row(s, c, cards, cache, context)


