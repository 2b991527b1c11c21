"""llama.cpp's decode time as fixed costs plus the weights at a share of the bandwidth, so that one fit carries across
model sizes (issue 37): t = W / (bandwidth x share) + layers x per-layer cost + per-token cost (+ the context term of
doctor/knowledge/decode_context.py).

Why: one share of the ceiling per engine (0.296, fitted on the 27B shape) put an 8B-like model 16-24% too fast and a
70B-like slice 22-28% too slow on the H200. A layer's ~15 small kernels (norms, rope, cache writes, flash attention,
adds) and the ramp of each matrix-vector product cost about the same whatever the layer's size, so they are a large
part of a small layer's time and a small part of a big one's. The share is what the products reach once that is
taken out (0.42-0.52 of 4800 GB/s; Q4_0's simpler blocks 0.51-0.66).

The H200's figures are sixteen fits (benchmarks/speed_model_fit.py), one per corner of the measured intervals of four
shapes; a plan's range is the envelope of the times they give a shape, widened by the fits' largest miss (2.1%). On
another card the fixed costs are the H200's (kernel launches and host work, assumed the same: an estimate) and the
share is solved so that the card's measured or published efficiency at its anchor shape holds (bandwidth scaling:
the products' time scales with the card's bandwidth, the fixed costs do not).

A mixture-of-experts layer is given a dense layer's fixed cost and its active experts' bytes (doctor/plan/gguf_memory.py
read shares); its router, top-k and per-expert products add kernels not measured here, so its speed is likely
overstated: no MoE GGUF has been timed yet.
"""

from __future__ import annotations

from dataclasses import dataclass

RESULTS = "benchmarks/results/issue37-speed-model/README.md"


@dataclass(frozen=True)
class Fit:
    """One fit: the products' share of the bandwidth, ms per layer, ms per token; Q4_0's share with the same costs."""

    share: float
    layer_ms: float
    token_ms: float
    q4_0_share: float


# fits-check-70b.json: Q4_K_M from the 27B-like shape at 64 layers (llama-bench and the probe, issues 27/28/35) and
# at 16 layers (issue 35), the 8B-like and the 70B-like slice of issue 37's summary; Q4_0 from issue 28's g3.
LLAMA_CPP_H200_FITS: tuple[Fit, ...] = (
    Fit(0.4697, 0.04661, 0.2801, 0.5386), Fit(0.4382, 0.04072, 0.2914, 0.5053), Fit(0.5223, 0.06084, 0.3073, 0.6483),
    Fit(0.4842, 0.0549, 0.3175, 0.6001), Fit(0.4699, 0.04654, 0.2844, 0.5386), Fit(0.4383, 0.04064, 0.2959, 0.5052),
    Fit(0.5227, 0.06077, 0.312, 0.6484), Fit(0.4844, 0.05483, 0.3223, 0.6001), Fit(0.4545, 0.04982, 0.144, 0.5455),
    Fit(0.4241, 0.04392, 0.152, 0.511), Fit(0.5035, 0.06447, 0.1643, 0.6612), Fit(0.4671, 0.05851, 0.1715, 0.6106),
    Fit(0.4547, 0.04975, 0.1484, 0.5455), Fit(0.4243, 0.04384, 0.1564, 0.5109), Fit(0.5038, 0.0644, 0.169, 0.6612),
    Fit(0.4673, 0.05844, 0.1763, 0.6106),
)
FIT_MISS = 0.0206  # the least-squares fits' largest miss of a measured interval, as a fraction of the time
H200_HOW = ("H200, llama.cpp (llama-cpp-python 0.3.36), flash attention: products at 0.42-0.52 of 4800 GB/s (Q4_0 "
            "0.51-0.66), 41-64 us a layer, 0.14-0.32 ms a token; fitted on a 27B-like shape at 64 and 16 layers "
            "(measured) and issue 37's 8B-like and 70B-like figures (summaries, shapes assumed)")
ELSEWHERE = ("the H200's fixed costs (assumed the same on this card) and a share that keeps this card's efficiency at "
             "its anchor shape")

# The shape each off-Hopper llama.cpp efficiency (doctor/knowledge/engine_efficiency.py) was read at: bytes per token
# on the GPU and layers.
ANCHORS: dict[str, tuple[float, int]] = {
    "volta": (15.9e9, 64),  # the story's 27B GGUF Q4_K_M on a V100 (engine table)
    "pascal-fp16-slow": (3.76e9, 32),  # LLaMA 7B Q4_0 on a P40 (llama.cpp PR 4766)
}


@dataclass(frozen=True)
class Times:
    """Milliseconds per token for the weights and the fixed costs: fast, mid, slow."""

    fast: float
    mid: float
    slow: float


def fixed_ms(f: Fit, layers: int) -> float:
    return layers * f.layer_ms + f.token_ms


def share(f: Fit, gguf_type: str | None) -> float:
    return f.q4_0_share if (gguf_type or "").upper() == "Q4_0" else f.share


def h200_times(weights_ms: float, layers: int, gguf_type: str | None) -> Times:
    """Over the H200's fits: the envelope widened by their largest miss, the mean in the middle."""
    t = [weights_ms / share(f, gguf_type) + fixed_ms(f, layers) for f in LLAMA_CPP_H200_FITS]
    return Times(min(t) * (1 - FIT_MISS), sum(t) / len(t), max(t) * (1 + FIT_MISS))


def mean_fixed_ms(layers: int) -> float:
    return sum(fixed_ms(f, layers) for f in LLAMA_CPP_H200_FITS) / len(LLAMA_CPP_H200_FITS)


def anchored_share(efficiency: float, anchor_ms: float, anchor_layers: int) -> float | None:
    """The products' share that keeps `efficiency` of the ceiling at the anchor with the H200's fixed costs; None
    when those costs alone would take longer than the anchor did (the card's figure cannot carry them)."""
    rest = anchor_ms / efficiency - mean_fixed_ms(anchor_layers)
    return anchor_ms / rest if rest > 0 else None


def elsewhere_times(weights_ms: float, layers: int, bandwidth_gbs: float, family: str,
                    low: float, mid: float, high: float) -> Times | None:
    """On a card of another family: its efficiency range turned into shares at its anchor, the fixed costs added
    (their spread over the H200's fits too). None without an anchor for the family."""
    anchor = ANCHORS.get(family)
    if anchor is None:
        return None
    anchor_ms = anchor[0] / (bandwidth_gbs * 1e6)
    shares = [anchored_share(e, anchor_ms, anchor[1]) for e in (high, mid, low)]
    if any(s is None for s in shares):
        return None
    s_high, s_mid, s_low = (s for s in shares if s is not None)
    fixed = [fixed_ms(f, layers) for f in LLAMA_CPP_H200_FITS]
    return Times(weights_ms / s_high + min(fixed), weights_ms / s_mid + sum(fixed) / len(fixed),
                 weights_ms / s_low + max(fixed))


def shares_at(weights_bytes: float, layers: int, bandwidth_gbs: float, family: str, gguf_type: str | None,
              low: float, mid: float, high: float) -> tuple[float, float, float] | None:
    """(low, mid, high) share of the weights' ceiling llama.cpp reaches at this shape: what a measured speed is
    judged against. On Hopper the H200's fits; elsewhere the family's efficiency (low/mid/high at its anchor)
    carried to this shape; None where neither applies (the caller keeps the family's own figure)."""
    w = weights_bytes / (bandwidth_gbs * 1e6)
    t = h200_times(w, layers, gguf_type) if family == "hopper" else \
        elsewhere_times(w, layers, bandwidth_gbs, family, low, mid, high)
    return None if t is None else (w / t.slow, w / t.mid, w / t.fast)
