"""The time one decoded token takes, per GPU: the bytes read at the card's bandwidth divided by the engine's
efficiency there, plus each engine's context term (doctor/knowledge/decode_context.py):

- ExLlamaV2: the weights, the cache (its own bytes + the FP16 dequantize round trip of a quantized cache) and,
  without flash-attn, the copy of K/V to every query head (2 x n_rep x 4E bytes per past token and layer), all at
  bandwidth / efficiency.
- llama.cpp (flash attention): the weights at bandwidth / efficiency; an f16 cache at the bandwidth; a quantized
  cache at a per-past-token cost measured on the H200 (scaled to other cards by bandwidth, range widened).

Times are (fast, mid, slow) in milliseconds; speed = 1000 / time.
"""

from __future__ import annotations

from dataclasses import dataclass

from doctor.knowledge import decode_context as dc
from doctor.knowledge.arithmetic import gguf_budget as g27
from doctor.knowledge.arithmetic.decode_bytes import read_ms
from doctor.knowledge.arithmetic.model_bytes import ModelDims
from doctor.knowledge.attention import cc_at_least
from doctor.knowledge.kv_cache import KV_CACHE_MODES
from doctor.model.gguf import GgufShape as HeaderShape


@dataclass(frozen=True)
class Span:
    """Milliseconds per token: fast (the low end of the cost), mid, slow."""

    fast: float
    mid: float
    slow: float

    def __add__(self, other: Span) -> Span:
        return Span(self.fast + other.fast, self.mid + other.mid, self.slow + other.slow)


ZERO = Span(0.0, 0.0, 0.0)
LLAMA_QUANT_CACHES = tuple(dc.LLAMA_QUANT_KV)


def exl2_flash_attn(cc: str) -> bool:
    """Whether ExLlamaV2 attends with flash-attn on this card as TabbyAPI installs it: sm_80 and newer (its cu12
    install brings the package; flash-attn 2 needs sm_80)."""
    return cc_at_least(cc, "8.0")


def exl2_copy_bytes(d: ModelDims, past: int, flash_attn: bool) -> int:
    """Bytes per layer one decode step moves for `repeat_kv` without flash-attn: K and V (4E in FP16) copied to
    every one of n_rep = heads / kv_heads query heads, written and read back: 2 x n_rep x 4E per past token. None
    with flash-attn, nor without grouped heads (repeat_kv returns the tensor itself when n_rep is 1)."""
    n_rep = d.heads // max(1, d.kv_heads)
    if flash_attn or past <= 0 or n_rep <= 1:
        return 0
    return past * 2 * n_rep * 4 * d.kv_heads * d.head_dim


def exl2_layer_bytes(d: ModelDims, past: int, cache: str, flash_attn: bool) -> int:
    """What one layer's attention moves per decode step: the cache read (with a quantized cache's FP16 round trip)
    and the repeat_kv copy."""
    return past * KV_CACHE_MODES[cache].decode_read_per_past_token_layer(d.kv_heads, d.head_dim) + \
        exl2_copy_bytes(d, past, flash_attn)


def _header(d: ModelDims) -> HeaderShape:
    return HeaderShape("llama", d.layers, d.hidden, d.intermediate, d.heads, d.kv_heads, d.head_dim, d.head_dim, d.vocab)


def measured_card(key: str) -> bool:
    return key == dc.MEASURED_ON


def llama_context_ms(d: ModelDims, past: int, cache: str, layers: int, bandwidth_gbs: float, card_key: str) -> Span:
    """llama.cpp's context term on one GPU holding `layers` layers, with flash attention: an f16 cache read at the
    bandwidth, a quantized one at its measured per-past-token cost (scaled by bandwidth off the H200)."""
    if past <= 0 or layers <= 0:
        return ZERO
    on_h200 = measured_card(card_key)
    if cache in ("f16", "fp16"):
        ms = read_ms(g27.kv_read_bytes(_header(d), past, cache, cache) * layers / d.layers, bandwidth_gbs)
        r = dc.LLAMA_F16_KV.value if on_h200 else dc.LLAMA_F16_KV_ELSEWHERE
        return Span(ms * r.low, ms * r.mid, ms * r.high)
    cost = dc.LLAMA_QUANT_KV.get(cache)
    if cost is None:
        raise ValueError(f"no decode cost known for llama.cpp's {cache} cache; one of f16, {', '.join(dc.LLAMA_QUANT_KV)}")
    ns = layers * past * d.heads * d.head_dim / dc.MEASURED_HEAD_WIDTH
    scale = 1.0 if on_h200 else dc.MEASURED_BANDWIDTH_GBS / bandwidth_gbs
    v = cost.value
    if on_h200:
        return Span(ns * v.low / 1e6, ns * v.mid / 1e6, ns * v.high / 1e6)
    w = dc.QUANT_KV_ELSEWHERE
    return Span(ns * v.low * scale * w.low / 1e6, ns * v.mid * scale * w.mid / 1e6, ns * v.high * scale * w.high / 1e6)


def context_term(engine: str, cache: str, card_cc: str, card_key: str, flash_attn: bool | None = None) -> tuple[str, str, str]:
    """(what, source, confidence) of the context term this engine, cache and card add to the weights' time."""
    if engine == "exllamav2":
        fa = exl2_flash_attn(card_cc) if flash_attn is None else flash_attn
        if fa:
            return ("flash-attn (sm_80+, as TabbyAPI installs it): no K/V copy", dc.REPEAT_KV_SOURCE, "P")
        c = dc.EXL2_REPEAT_KV
        return (c.what, c.source, c.confidence)
    if cache in ("f16", "fp16"):
        c = dc.LLAMA_F16_KV
        return (c.what + ("" if measured_card(card_key) else f" ({c.elsewhere})"), c.source,
                c.confidence if measured_card(card_key) else "K")
    c = dc.LLAMA_QUANT_KV[cache]
    if measured_card(card_key):
        return (c.what, c.source, c.confidence)
    return (f"{c.what}, {dc.QUANT_KV_SCALING}", c.source, "K")
