"""What each engine's decode costs per past token beyond reading the cache once: the context terms of the plan's
time model (doctor/knowledge/arithmetic/decode_time.py), and the efficiencies refitted with them.

Measured on the H200 (benchmarks/results/issue28-accuracy/README.md, 14 decodes at 2048-16384 past tokens):
- ExLlamaV2 without flash-attn (torch SDPA after `repeat_kv`) copies K and V to every query head each step: per past
  token and layer 2 x n_rep x 4E bytes more (written, then read), E = kv_heads x head_dim. With flash-attn (sm_80+,
  the package installed: TabbyAPI's cu12 install brings it) there is no copy.
- llama.cpp with flash attention reads an f16 cache at about the bandwidth, not at the weights' efficiency.
- llama.cpp's quantized K/V (q8_0, q4_0) cost ~0.35 us per past token on the H200 for 64 layers x 40 heads x 128:
  the vec kernel dequantizes inside the dot products, a compute cost, not bytes (12-24x their bytes' time).

Every figure names its source and confidence; one measured on the H200 and used on another card says how it is
scaled and widens its range: an estimate, said so.
"""

from __future__ import annotations

from dataclasses import dataclass

from doctor.knowledge.engine_efficiency import EFFICIENCIES, FAMILY_FALLBACK, STORY, Efficiency, efficiency
from doctor.model.range import Range

ISSUE28 = "benchmarks/results/issue28-accuracy/README.md (H200, ExLlamaV2 0.3.2, llama.cpp of llama-cpp-python 0.3.36)"
REPEAT_KV_SOURCE = ("https://github.com/turboderp-org/exllamav2/blob/v0.3.2/exllamav2/attn.py (repeat_kv before torch "
                    "SDPA when flash-attn is not used); " + ISSUE28)
MEASURED_ON = "h200"
MEASURED_BANDWIDTH_GBS = 4800.0
MEASURED_HEAD_WIDTH = 40 * 128  # query heads x head_dim of the measured model


@dataclass(frozen=True)
class ContextCost:
    key: str
    engine: str
    what: str
    value: Range  # a factor on bytes at bandwidth, or ns per past token per layer per (query heads x head_dim / 5120)
    how: str
    source: str
    confidence: str
    elsewhere: str  # how it is used on a card other than the one it was measured on


# The copy's bytes follow from the code; the H200 fit (all five ExLlamaV2 decodes at 0.27-0.31 of the ceiling with
# them, as flat as the short-context probes) says they are moved at the same pace as the weights.
EXL2_REPEAT_KV = ContextCost(
    "exl2-repeat-kv", "exllamav2", "K/V copied to every query head without flash-attn: 2 x n_rep x 4E bytes per past "
    "token and layer, read at the weights' pace", Range(1.0, 1.0, 1.0),
    "with the copy's bytes in the ceiling the H200's five ExLlamaV2 decodes (2048-16384 past, FP16/Q6/Q8 caches) sit at "
    "0.274-0.308 of it; without them at 0.09-0.20", REPEAT_KV_SOURCE, "P",
    "bytes, so the card's bandwidth and ExLlamaV2's efficiency there apply as they are")

# f16 K/V with flash attention: 0.057 us per past token (64 layers) against 0.055 for its bytes at 4800 GB/s.
LLAMA_F16_KV = ContextCost(
    "llama-f16-kv", "llama.cpp", "f16 K/V read by flash attention at the bandwidth (not the weights' efficiency)",
    Range(0.95, 1.0, 1.1),
    "H200: Q4_K_M with an f16 cache at 2048 and 16384 past (91.7, 92.2 and 85.5 tok/s) give the weights the same "
    "share of their time (0.295-0.297) with the cache read at 4800 GB/s (0.055 us per past token over 64 layers)",
    ISSUE28, "P", "bytes at the card's bandwidth; off the H200 the range is widened to 1.0-1.5x (older cards' "
                  "kernels not measured)")
LLAMA_F16_KV_ELSEWHERE = Range(1.0, 1.0, 1.5)

# Quantized K/V with flash attention: per past token per layer, for a model of 40 query heads x 128 (scaled by heads x
# head_dim: every query head's dot products dequantize the past once). q8_0 from the two q8_0 decodes at 16384 past
# (60.14, 61.85 tok/s), q4_0 from the one at 8192 (72.79), each less the Q4_K_M weights' time of the f16 decodes.
LLAMA_QUANT_KV = {
    "q8_0": ContextCost(
        "llama-q8_0-kv", "llama.cpp", "q8_0 K/V dequantized in flash attention's dot products (compute, not bytes)",
        Range(5.10, 5.37, 5.65),
        "H200: 0.330 and 0.358 us per past token over 64 layers (g2 of calls 1 and 2, 16384 past: 61.85 and 60.14 "
        "tok/s, less the Q4_K_M weights' 10.77 ms at 0.296)",
        ISSUE28, "P", ""),
    "q4_0": ContextCost(
        "llama-q4_0-kv", "llama.cpp", "q4_0 K/V dequantized in flash attention's dot products (compute, not bytes)",
        Range(5.50, 5.67, 5.85),
        "H200: 0.363 us per past token over 64 layers (g4 of call 3, 8192 past: 72.79 tok/s, less the Q4_K_M weights' "
        "10.77 ms at 0.296; one decode: the q8_0 pair's 3% spread assumed)", ISSUE28, "P", ""),
}
# Off the H200 the cost is scaled by the card's bandwidth against the H200's 4800 GB/s. Why bandwidth: it is known for
# every card the doctor plans (FP32/FP16 rates are not in its table and differ in kind: Pascal's FA path runs in FP32,
# Volta's in FP16), and it is the pessimistic one of the two plausible scalings: by FP32 rate a V100 is 4.3x slower
# than an H200 (15.7 against 67 TFLOPS), by bandwidth 5.3x; a T4 8x against 15x; a P40 5.7x against 13.9x. The range
# spans both: down to 0.4x the bandwidth-scaled cost (the FP32-rate scaling on a P40 or T4), up to 1.25x (an older
# kernel less tuned than the one measured). Not measured on these cards: confidence K.
QUANT_KV_ELSEWHERE = Range(0.4, 1.0, 1.25)
QUANT_KV_SCALING = ("scaled from the H200 by bandwidth (4800 GB/s against the card's), range 0.4-1.25x of that to "
                    "cover scaling by the FP32 rate instead (an estimate, not measured on this card)")

# The efficiencies of the plan's time model: the share of the bandwidth time at which an engine reads its weights
# (ExLlamaV2: weights, cache and the repeat_kv copy; llama.cpp: the weights, its cache being a context term above).
# Families without a row here use doctor/knowledge/engine_efficiency.py's (fitted at short contexts, where the
# context terms are a few percent at most).
TIME_MODEL_EFFICIENCIES: tuple[Efficiency, ...] = (
    Efficiency("exllamav2", "hopper", 0.27, 0.29, 0.31,
               "H200, 64 layers 5120/21760 EXL2 4.0 bpw, no flash-attn: 70.4 and 70.3 tok/s at 2048 past (FP16 "
               "cache), 34.9 at 8192 (Q6), 21.5 and 21.9 at 16384 (Q8), 24.6 at 16384 (FP16): 0.273-0.308 of the "
               "ceiling with the weights, the cache and the repeat_kv copy at 4800 GB/s",
               ISSUE28 + " (call1-3/e*.json, x2cap)", "P"),
    Efficiency("exllamav2", "volta", 0.66, 0.95, 0.95,
               "V100 16 GB, Qwen 27B, no flash-attn (sm_70): EXL2 3.75 bpw + Q8 cache 64 tok/s of a 67.5 tok/s "
               "ceiling at 256 tokens of context (12.67 GB of weights and cache, 0.67 GB of the repeat_kv copy at "
               "900 GB/s); EXL2 4.25 bpw + Q8 cache 40 tok/s of 60.3 (stage 2, before its last tuning)",
               STORY + " §3.4 and §4.2; the copy: " + REPEAT_KV_SOURCE, "S"),
    Efficiency("llama.cpp", "hopper", 0.29, 0.296, 0.30,
               "H200, synthetic 27B (64 layers, vocab 8192), flash attention: Q4_K_M weights (K-quant mixes) at "
               "0.295-0.297 of their bandwidth time (91.7 and 92.2 tok/s at 2048 past, 85.5 at 16384, the f16 cache "
               "at the bandwidth)", ISSUE28 + " (call1-3/g*.json)", "P"),
)

# Legacy GGUF types run nearer the ceiling than K-quant mixes (simpler dequantization): measured for Q4_0 only.
GGUF_TYPE_EFFICIENCIES: dict[tuple[str, str], Efficiency] = {
    ("hopper", "Q4_0"): Efficiency(
        "llama.cpp", "hopper", 0.335, 0.339, 0.345,
        "H200, synthetic 27B, flash attention: Q4_0 weights at 0.338 and 0.340 of their bandwidth time (107.8 and "
        "108.4 tok/s at 8192 past, f16 cache at the bandwidth)", ISSUE28 + " (call1-2/g3_q40_c16384_f16.json)", "P"),
}


def time_model_efficiency(engine: str, fam: str, gguf_type: str | None = None) -> tuple[Efficiency, str]:
    """The row for this GGUF type on this family where one was measured; the refitted row for this engine and family; else engine_efficiency's own row for the family; else the
    refitted, then the plain, row of the family engine_efficiency assumes for it, with a note saying so."""
    def refit(f: str) -> Efficiency | None:
        return next((e for e in TIME_MODEL_EFFICIENCIES if e.engine == engine and e.family == f), None)

    typed = GGUF_TYPE_EFFICIENCIES.get((fam, (gguf_type or "").upper())) if engine == "llama.cpp" else None
    own = typed or refit(fam) or next((e for e in EFFICIENCIES if e.engine == engine and e.family == fam), None)
    if own:
        return own, ""
    other = FAMILY_FALLBACK.get(fam, "volta")
    stand_in = refit(other)
    if stand_in:
        return stand_in, f"no {engine} figure for {fam}: the {other} figure is assumed"
    return efficiency(engine, fam)
