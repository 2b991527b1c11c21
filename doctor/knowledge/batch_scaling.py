"""How one decode step's time grows with the number of tokens it computes at once: several streams batched, or a
speculative draft verified in one pass.

Decode reads every weight once per step whatever the batch, but the quantized kernels dequantize and multiply once per
column: llama.cpp's mul_mat_vec_q does B dot products per weight block it loads (B up to 8, then MMQ), so the step time
grows with B. Each row gives the step time at B columns over the step time at one (t(B) / t(1)), read off published
llama-bench microbatch tables (pp512 at -ub B: B tokens through every matmul, a short context). Low/mid/high span the
rows of the same architecture; a family with no figure takes another's, and says so (K).

expected total tok/s at B streams = B / (t_weights(1) x ratio(B) + B x each stream's context term): the context term
(its KV read, ExLlamaV2's repeat_kv copy) is paid per stream (doctor/plan/concurrency.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from doctor.model.range import Range


@dataclass(frozen=True)
class BatchRatio:
    engine: str  # llama.cpp | exllamav2
    family: str  # engine_efficiency's families
    points: dict[int, Range]  # columns B -> t(B) / t(1)
    how: str
    source: str
    confidence: str


PR15802 = "https://github.com/ggml-org/llama.cpp/pull/15802"
PR8215 = "https://github.com/ggml-org/llama.cpp/pull/8215"
PR5434 = "https://github.com/ggml-org/llama.cpp/pull/5434"

# tok/s at 1, 2, 4, 8 columns (llama-bench pp512 at -ub B)
RTX3090_8B_Q4_0 = {1: 156.56, 2: 279.89, 4: 470.48, 8: 583.77}  # PR 15802
RTX3090_8B_IQ3_XXS = {1: 143.46, 2: 242.70, 4: 367.51, 8: 527.16}  # PR 8215
RTX4090_8B_IQ3_XXS = {1: 235.58, 2: 403.91, 4: 731.84, 8: 1162.57}  # PR 8215


def _spread(b: int, mid: dict[int, float], *others: dict[int, float]) -> Range:
    """t(B)/t(1) = B x tok/s(1) / tok/s(B) of each table: `mid`'s is the one used, all of them give the range."""
    vals = [b * t[1] / t[b] for t in (mid, *others)]
    return Range(round(min(vals), 3), round(vals[0], 3), round(max(vals), 3))


# Ampere/Ada: Q4_0 (a legacy type) in the middle, IQ3_XXS (more dequantizing) on a 3090 and a 4090 for the range.
AMPERE = {b: _spread(b, RTX3090_8B_Q4_0, RTX3090_8B_IQ3_XXS, RTX4090_8B_IQ3_XXS) for b in (1, 2, 4, 8)}

# Pascal GP102 (P40): llama 7B Q4_K_S at 50.74, 55.98, 76.67, 87.57 tok/s at 1-4 columns (PR 5434, after the PR);
# 8 columns not in the excerpt read: extrapolated from 3 to 4 (+0.33 per column), the range widened.
PASCAL = {
    1: Range(1.0, 1.0, 1.0),
    2: Range(1.7, round(2 * 50.74 / 55.98, 3), 1.9),
    4: Range(2.1, round(4 * 50.74 / 87.57, 3), 2.5),
    8: Range(3.0, 3.65, 4.3),
}

# Hopper, measured here (H200, 2026-12-04): llama-batched-bench's S_TG on the synthetic 27B-like Q4_K_M GGUF (64 layers
# of 5120/21760, 40/8 heads; -npp 128 -ntg 128 -npl 1,2,4,8) 94.13, 176.10, 248.09, 332.12 tok/s, and `probe --streams
# 1,2,4` against llama-server --parallel 4 on the same file 93.42, 172.62, 237.78 (served: HTTP and staggered first
# tokens). Mid: batched-bench's t(B)/t(1); the band: +/- its gap to the served probe's (at 8, 4's relative gap).
H200_27B_Q4_K_M_BENCH = {1: 94.13, 2: 176.10, 4: 248.09, 8: 332.12}
H200_27B_Q4_K_M_SERVED = {1: 93.42, 2: 172.62, 4: 237.78}
H200_MEASURED = "benchmarks/results/issue38-streams/h200-llamacpp-27b/"


def _measured_band(bench: dict[int, float], served: dict[int, float]) -> dict[int, Range]:
    """t(B)/t(1) from llama-batched-bench, widened either side by its gap to the served figure at the same B."""
    out, rel = {}, 0.0
    for b in sorted(bench):
        mid = b * bench[1] / bench[b]
        if b in served:
            rel = abs(b * served[1] / served[b] - mid) / mid
        out[b] = Range(round(mid * (1 - rel), 3), round(mid, 3), round(mid * (1 + rel), 3))
    return out


HOPPER = _measured_band(H200_27B_Q4_K_M_BENCH, H200_27B_Q4_K_M_SERVED)

BATCH_RATIOS: tuple[BatchRatio, ...] = (
    BatchRatio("llama.cpp", "ampere", AMPERE,
               "llama-bench pp512 at -ub 1/2/4/8 (mul_mat_vec_q): RTX 3090 8B Q4_0 t(B)/t(1) 1.12, 1.33, 2.15; "
               "RTX 3090 and 4090 8B IQ3_XXS 1.18/1.17, 1.56/1.29, 2.18/1.62",
               f"{PR15802} ; {PR8215}", "S"),
    BatchRatio("llama.cpp", "pascal-fp16-slow", PASCAL,
               "llama-bench pp512 at -ub 1-4 on a P40, 7B Q4_K_S: t(B)/t(1) 1.81 at 2, 2.32 at 4 (dp4a int8 dot "
               "products, FP32 elsewhere); 8 extrapolated",
               PR5434, "S"),
    BatchRatio("llama.cpp", "hopper", HOPPER,
               "measured on an H200: llama-batched-bench 27B-like Q4_K_M t(B)/t(1) 1.07 at 2, 1.52 at 4, 2.27 at 8; "
               "the band from llama-server --parallel 4 timed by probe --streams (1.08, 1.57)",
               H200_MEASURED, "P"),
)

# Families without a row take another's: Volta and Turing have the same dp4a MMVQ path as Ampere (no Ampere-only
# instructions below MMQ), said so (K).
RATIO_FALLBACK = {"volta": "ampere", "turing": "ampere", "ada": "ampere", "pascal-gp100": "ampere"}


def batch_ratio(engine: str, fam: str) -> tuple[BatchRatio, str]:
    """The row for this engine on this family, and a note when another's stands in. ExLlamaV2 has no published
    microbatch table: llama.cpp's for the family stands in (both dequantize inside the matmul), said so."""
    note = "" if engine == "llama.cpp" else "no ExLlamaV2 microbatch figures: llama.cpp's dequantizing kernels' stand in"
    for r in BATCH_RATIOS:
        if r.family == fam:
            return r, note
    other = RATIO_FALLBACK.get(fam, "ampere")
    row = next(r for r in BATCH_RATIOS if r.family == other)
    said = f"no batched-decode figure for {fam}: the {other} one is assumed"
    return row, "; ".join(x for x in (note, said) if x)


def ratio_at(row: BatchRatio, columns: int) -> Range:
    """t(B)/t(1) at `columns`, linear between the table's points and, past the last, along its last segment."""
    keys = sorted(row.points)
    if columns in row.points:
        return row.points[columns]
    lo = max((k for k in keys if k < columns), default=keys[0])
    hi = min((k for k in keys if k > columns), default=None)
    if hi is None:
        hi, lo = keys[-1], keys[-2]
    a, b = row.points[lo], row.points[hi]
    f = (columns - lo) / (hi - lo)
    vals = sorted(round(x + (y - x) * f, 3) for x, y in ((a.low, b.low), (a.mid, b.mid), (a.high, b.high)))
    return Range(vals[0], vals[1], vals[2])
