"""Batched decode per plan row: total and per-stream tok/s at 1, 2, 4, 8 ... concurrent streams, up to what the cache
holds, and the knee (where another doubling of streams adds under 10% of total speed).

The physics of the single stream (doctor/knowledge/arithmetic/decode_time.py), split in two: the weights' time, paid
once per step whatever the batch but grown by the kernels' per-column compute (doctor/knowledge/batch_scaling.py), and
each stream's context term (its KV read; ExLlamaV2's repeat_kv copy without flash-attn), paid once per stream:

    t(B) = t_weights x ratio(B) + B x t_context        total = B / t(B)        per stream = total / B

What each engine batches:
- llama.cpp: llama-server --parallel N with -c N x context (each slot gets -c / N); Ollama's OLLAMA_NUM_PARALLEL=N
  does the same, num_ctx x N of cache (https://github.com/ollama/ollama/blob/main/docs/faq.md).
- ExLlamaV2 (TabbyAPI's dynamic generator): batches only in paged mode, which needs flash-attn 2.5.7+ (sm_80+);
  unpaged, "the max supported batch size is 1" (exllamav2/generator/dynamic.py's docstring): the jobs take turns, so
  total speed stays that of one stream and each of N streams gets 1/N of it.
- vLLM (max_num_seqs) is not planned: its memory is not modelled here.
"""

from __future__ import annotations

from dataclasses import replace

from doctor.knowledge.arithmetic import decode_time as dt
from doctor.knowledge.arithmetic.decode_bytes import read_ms
from doctor.knowledge.arithmetic.vram_budget import SEQ_STEP
from doctor.knowledge.batch_scaling import batch_ratio, ratio_at
from doctor.knowledge.decode_context import time_model_efficiency
from doctor.knowledge.engine_efficiency import family
from doctor.knowledge.exl2_batching import DYNAMIC_PY, TAKE_TURNS
from doctor.knowledge.gpus import GpuSpec
from doctor.knowledge.kv_cache import KV_CACHE_MODES
from doctor.model.quant_plan import PlanRow, StreamsEstimate, TokS, knee
from doctor.model.range import Range
from doctor.plan import gguf_memory as gm
from doctor.plan.rows import Setting, arithmetic

OLLAMA_FAQ = "https://github.com/ollama/ollama/blob/main/docs/faq.md"
LLAMA_SERVER = "https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md"
IN_TURN = f"{TAKE_TURNS}, the total staying one stream's speed"


STREAMS_NOTE = ("streams: how many full-context sequences the memory left after one holds (TabbyAPI's cache_size, "
                "llama-server's --parallel with -c x streams); 'knee': the fewest concurrent streams within 10% of the "
                "highest total speed estimated (batched decode, 1 to 8 streams, the cache split when it holds fewer "
                "whole; an estimate: the JSON's rows[].concurrency has every figure)")
MIN_CONTEXT = 512  # the ladder stops where the cache split N ways leaves a stream less than this
MAX_STREAMS = 8  # the published per-column figures stop at 8 (llama.cpp's mul_mat_vec_q); past it MMQ takes over
QUEUED_UP_TO = 8  # an engine that runs one stream at a time: how far the ladder shows the queue


def cache_tokens(s: Setting, r: PlanRow) -> int:
    """Tokens of cache the card holds with this option: one stream's `context` and whatever memory is left."""
    d = s.dims
    per = (gm.kv_bytes(d, r.context, r.cache) if arithmetic(r.engine) == "llama.cpp" else
           KV_CACHE_MODES[r.cache].bytes_per_token(d.layers, d.kv_heads, d.head_dim) * r.context)
    margin = sum(max(0, c - p) for p, c in zip(r.peak_bytes, r.capacity_bytes))
    return int((margin + per) / per * r.context) if per else r.context


def ladder(s: Setting, r: PlanRow) -> list[tuple[int, int]]:
    """(streams, context per stream): 1, 2, 4, 8 ... streams at the row's context while the cache holds them whole,
    then the cache split N ways (llama-server's -c over --parallel slots, TabbyAPI's cache_size) down to MIN_CONTEXT.
    An engine that runs one stream at a time: each keeps the whole context, up to QUEUED_UP_TO streams."""
    if not batches(s, r):
        return [(n, r.context) for n in (1, 2, 4, 8) if n <= QUEUED_UP_TO]
    held, out, n = cache_tokens(s, r), [], 1
    while n <= MAX_STREAMS:
        ctx = r.context if n <= r.streams else min(r.context, held // n // SEQ_STEP * SEQ_STEP)
        if ctx < MIN_CONTEXT:
            break
        out.append((n, ctx))
        n *= 2
    return out


def _cards(s: Setting, r: PlanRow) -> tuple[GpuSpec, ...]:
    return tuple(next(g for g in s.cards if g.key == k) for k in r.cards)


def batches(s: Setting, r: PlanRow) -> bool:
    """Whether the row's engine runs several streams in one step on these cards."""
    return arithmetic(r.engine) != "exllamav2" or all(s.flash_attn(g) for g in _cards(s, r))


def context_ms(s: Setting, r: PlanRow, past: int) -> dt.Span:
    """One stream's context term at `past` tokens, as the row's speed counts it (fast, mid, slow)."""
    cards, d = _cards(s, r), s.dims
    if arithmetic(r.engine) == "llama.cpp":
        layers = gm.split_layers(d.layers, [float(c) for c in r.capacity_bytes])
        ctx = dt.ZERO
        for n, g in zip(layers, cards):
            ctx = ctx + dt.llama_context_ms(d, past, r.cache, n, g.bandwidth_gbs, g.key)
        return ctx
    slowest = min(cards, key=lambda c: c.bandwidth_gbs)
    eff, _ = time_model_efficiency("exllamav2", family(slowest.cc, slowest.fp16_slow))
    ms = read_ms(d.layers * dt.exl2_layer_bytes(d, past, r.cache, s.flash_attn(slowest)), slowest.bandwidth_gbs)
    return dt.Span(ms / eff.high, ms / eff.mid, ms / eff.low)


def weights_ms(s: Setting, r: PlanRow, past: int) -> dt.Span:
    """The single stream's time less its context term: what a batched step pays once."""
    ctx = context_ms(s, r, past)
    one = dt.Span(1000 / r.speed.high, 1000 / r.speed.mid, 1000 / r.speed.low)
    return dt.Span(*(max(t - c, 0.1 * t) for t, c in ((one.fast, ctx.fast), (one.mid, ctx.mid), (one.slow, ctx.slow))))


def ratio(s: Setting, r: PlanRow, columns: int) -> tuple[Range, str, str]:
    """t(columns)/t(1) for the row's engine on its slowest card, with its source and a note when another stands in."""
    slowest = min(_cards(s, r), key=lambda c: c.bandwidth_gbs)
    row, note = batch_ratio(arithmetic(r.engine), family(slowest.cc, slowest.fp16_slow))
    return ratio_at(row, columns), f"{row.how} ({row.source}, {row.confidence})", note


def at_streams(s: Setting, r: PlanRow, streams: int, context: int | None = None) -> StreamsEstimate:
    """Total and per-stream tok/s with `streams` streams, each with half of `context` (default the row's) in the
    cache (mid-conversation, as the row's own speed)."""
    context = r.context if context is None else context
    one = TokS(r.speed.low, r.speed.mid, r.speed.high)
    if not batches(s, r):  # one job at a time: the total is one stream's
        total = one
    else:
        w, c = weights_ms(s, r, r.context // 2), context_ms(s, r, context // 2)
        k, _, _ = ratio(s, r, streams)
        total = TokS(round(streams * 1000 / (w.slow * k.high + streams * c.slow), 1),
                     round(streams * 1000 / (w.mid * k.mid + streams * c.mid), 1),
                     round(streams * 1000 / (w.fast * k.low + streams * c.fast), 1))
    per = TokS(round(total.low / streams, 1), round(total.mid / streams, 1), round(total.high / streams, 1))
    return StreamsEstimate(streams, context, total, per)


def source(s: Setting, r: PlanRow) -> str:
    """How the row's batched figures are made, and what its engine batches, with sources."""
    if not batches(s, r):
        return IN_TURN
    _, how, note = ratio(s, r, 2)
    engine = (f"llama-server --parallel N with -c N x the context per stream ({LLAMA_SERVER}); Ollama: "
              f"OLLAMA_NUM_PARALLEL=N, num_ctx x N in memory ({OLLAMA_FAQ})" if arithmetic(r.engine) == "llama.cpp" else
              f"ExLlamaV2's paged dynamic generator (flash-attn), cache_size N x the context per stream ({DYNAMIC_PY})")
    return (f"estimate: {engine}; each step reads the weights once, slowed by the per-column compute t(B)/t(1): {how}"
            + (f" ({note})" if note else "") + "; each stream's own context term added per stream")


def with_concurrency(s: Setting, r: PlanRow) -> PlanRow:
    """The row with its batched-decode estimates (none for a row that does not fit)."""
    if not r.fits:
        return r
    entries = tuple(at_streams(s, r, n, ctx) for n, ctx in ladder(s, r))
    return replace(r, concurrency=entries, concurrency_source=source(s, r), knee=knee(entries))
