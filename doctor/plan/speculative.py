"""Speculative decoding with a --draft model, estimated: the draft proposes GAMMA tokens one at a time, the target
checks them (and one more) in one pass; with acceptance rate a the expected tokens per pass are
(1 - a^(GAMMA+1)) / (1 - a) (Leviathan et al., https://arxiv.org/abs/2211.17192, eq. 1).

    time per pass = GAMMA x t_draft + t_weights x ratio(GAMMA + 1) + t_context
    speed = expected tokens per pass / time per pass

ratio(GAMMA + 1): the target's step with GAMMA + 1 columns through its quantized matmuls, from the same per-column
figures as batched decode (doctor/knowledge/batch_scaling.py). t_draft: the draft's weights at the card's bandwidth
over the engine's efficiency, but never under a per-layer floor (a small model is bound by launches, not bytes).
"""

from __future__ import annotations

from dataclasses import replace

from doctor.knowledge.arithmetic.decode_bytes import read_ms
from doctor.knowledge.decode_context import time_model_efficiency
from doctor.knowledge.engine_efficiency import family
from doctor.model.quant_plan import Estimate, PlanRow
from doctor.model.range import Range
from doctor.plan import concurrency as cc
from doctor.plan.rows import Setting, arithmetic

GAMMA = 4  # draft tokens per pass: assumed (TabbyAPI's and llama-server's defaults differ and adapt; K)
# No per-family acceptance figure verified for the models the doctor plans: a generic span, said so (K). The
# reference story's "1.5-2x" sits inside what it gives for a cheap draft.
ACCEPTANCE = Range(0.5, 0.65, 0.8)
ACCEPTANCE_SOURCE = ("acceptance 0.5-0.8 (0.65 used): a generic span, no per-family figure verified (K); expected "
                     "tokens per pass (1 - a^(g+1)) / (1 - a): https://arxiv.org/abs/2211.17192")
# A small model is launch-bound: ExLlamaV2 on the H200 ran a 30-layer synthetic model at 156.7 tok/s where its bytes
# allowed 762 (6.4 ms, 0.21 ms per layer): benchmarks/results/run2_probe_synthetic_nosampling_h200.json (P there; K
# for other engines and cards). The range runs down to half of it.
LAYER_FLOOR_MS = Range(0.105, 0.21, 0.21)


def expected_tokens(a: float, gamma: int = GAMMA) -> float:
    return gamma + 1.0 if a >= 1 else (1 - a ** (gamma + 1)) / (1 - a)


def draft_ms(s: Setting, r: PlanRow, weight_bytes: int, layers: int) -> tuple[float, float, float]:
    """The draft's time per token (fast, mid, slow) on the row's first card, where TabbyAPI and llama.cpp put it."""
    card = next(g for g in s.cards if g.key == r.cards[0])
    eff, _ = time_model_efficiency(arithmetic(r.engine), family(card.cc, card.fp16_slow))
    ms = read_ms(weight_bytes, card.bandwidth_gbs)
    return (max(ms / eff.high, layers * LAYER_FLOOR_MS.low), max(ms / eff.mid, layers * LAYER_FLOOR_MS.mid),
            max(ms / eff.low, layers * LAYER_FLOOR_MS.high))


def speculative(s: Setting, r: PlanRow, weight_bytes: int, layers: int) -> Estimate:
    """Single-stream tok/s with the draft, at half the row's context (as the row's own speed)."""
    past = r.context // 2
    w, c = cc.weights_ms(s, r, past), cc.context_ms(s, r, past)
    k, how, note = cc.ratio(s, r, GAMMA + 1)
    fast, mid, slow = draft_ms(s, r, weight_bytes, layers)
    hi = expected_tokens(ACCEPTANCE.high) * 1000 / (GAMMA * fast + w.fast * k.low + c.fast)
    md = expected_tokens(ACCEPTANCE.mid) * 1000 / (GAMMA * mid + w.mid * k.mid + c.mid)
    lo = expected_tokens(ACCEPTANCE.low) * 1000 / (GAMMA * slow + w.slow * k.high + c.slow)
    return Estimate(round(lo, 1), round(md, 1), round(hi, 1),
                    f"estimate: {GAMMA} draft tokens per pass (assumed), the draft at {mid:.1f} ms per token "
                    f"({fast:.1f}-{slow:.1f}), the target checking {GAMMA + 1} tokens at {k.mid:g}x one token's step "
                    f"({how}{'; ' + note if note else ''}); {ACCEPTANCE_SOURCE}", "K")


def with_speculative(s: Setting, r: PlanRow, weight_bytes: int, layers: int) -> PlanRow:
    if not r.fits or not weight_bytes:
        return r
    return replace(r, speculative=speculative(s, r, weight_bytes, layers))
