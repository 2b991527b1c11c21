"""Bytes read per decoded token, and the decode ceiling they imply for a card's memory bandwidth.

Single-stream decode is memory-bound: each token reads every weight matrix once, the LM head once,
one row of the embedding, and the KV cache of every past token. Ceiling = bandwidth / those bytes.
This is the public arithmetic the probe's verdict uses:

    from doctor.knowledge.arithmetic.decode_bytes import bytes_per_token, ceiling_tok_s
    b = bytes_per_token(model_facts, context=4096, cache_mode="q8")   # breakdown dict
    ceiling_tok_s(b["total_bytes"], bandwidth_gbs=900)                 # tok/s
"""

from __future__ import annotations

from doctor.knowledge.arithmetic.model_bytes import ArithmeticUnavailable, dims, model_bytes
from doctor.knowledge.kv_cache import DECODE_TRAFFIC_SOURCE, KV_CACHE_MODES
from doctor.model.model_dir import ModelFacts

__all__ = ["ArithmeticUnavailable", "bytes_per_token", "ceiling_tok_s", "kv_read_bytes", "read_ms"]


def bytes_per_token(model: ModelFacts, context: int = 0, cache_mode: str = "fp16") -> dict:
    """What one decode step reads, as a breakdown (bytes), with `context` tokens already in the cache.

    Keys: weights_bytes (decoder layers + norms), lm_head_bytes, embedding_row_bytes, kv_read_bytes,
    total_bytes, context, cache_mode, counted (text), source (headers or "estimated from config.json ...").
    Raises ArithmeticUnavailable when the model's sizes or shape cannot be known.
    """
    if cache_mode not in KV_CACHE_MODES:
        raise ValueError(f"unknown cache mode {cache_mode!r}; one of {', '.join(KV_CACHE_MODES)}")
    if context < 0:
        raise ValueError("context must be >= 0")
    mb = model_bytes(model)
    d = dims(model.config)
    mode = KV_CACHE_MODES[cache_mode]
    kv = kv_read_bytes(d.layers, d.kv_heads, d.head_dim, context, cache_mode)
    weights = sum(mb.read_layer_bytes) + mb.norm_bytes  # a MoE: the active experts only
    total = weights + mb.lm_head_bytes + mb.embedding_row_bytes + kv
    return {
        "weights_bytes": weights,
        "lm_head_bytes": mb.lm_head_bytes,
        "embedding_row_bytes": mb.embedding_row_bytes,
        "kv_read_bytes": kv,
        "total_bytes": total,
        "context": context,
        "cache_mode": cache_mode,
        "counted": (("every decoder-layer weight once (of a MoE's routed experts, the ones a token uses), "
                     if mb.layer_expert_bytes else "every decoder-layer weight once, ") + "the LM head once, one embedding row (the table stays in host RAM), "
                    f"and the KV cache of {context} past tokens"
                    + ("" if not mode.fp16_scratch_pair else
                       f" ({mode.key}: its own bytes plus the FP16 dequantize round trip, 8 bytes x E per past token per layer)")),
        "source": mb.source,
        "kv_source": DECODE_TRAFFIC_SOURCE if mode.fp16_scratch_pair else mode.source,
        "notes": list(mb.notes),
    }


def kv_read_bytes(layers: int, kv_heads: int, head_dim: int, context: int, cache_mode: str) -> int:
    """The KV cache bytes one decode step moves with `context` past tokens (the verdict uses the probe's shape)."""
    return layers * context * KV_CACHE_MODES[cache_mode].decode_read_per_past_token_layer(kv_heads, head_dim)


def ceiling_tok_s(total_bytes: float, bandwidth_gbs: float) -> float:
    """The physical single-stream decode ceiling: bandwidth (GB/s, 1e9 bytes) / bytes per token."""
    if total_bytes <= 0 or bandwidth_gbs <= 0:
        raise ValueError("bytes per token and bandwidth must be positive")
    return bandwidth_gbs * 1e9 / total_bytes


def read_ms(n_bytes: float, bandwidth_gbs: float) -> float:
    """Milliseconds to read `n_bytes` once at `bandwidth_gbs` (1e9 bytes/s): one part's share of a token's time,
    the ceiling's inverse taken part by part (weights, KV, one GPU of a split)."""
    return n_bytes / (bandwidth_gbs * 1e9) * 1000
