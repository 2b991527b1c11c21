"""The verdict for a Transformers probe: the decode ceiling for the bytes the loaded model reads per token, and what
explains the gap for this engine: bitsandbytes' 4-bit path (its own NF4 kernels, against the cost the reference
story measured on a V100), FP16 arithmetic on a card that runs it at 1/64 (P40), eager decode (every op of every
layer launched from Python each token, no CUDA graphs: a host-bound card shows it as low utilisation), a first-use
cost in the warm-up, and the engine gap: what the other engines decode here (doctor/verdict/engine_gap.py). A probe
that did not finish gets no attribution: its outcome is the finding.
"""

from __future__ import annotations

from doctor.knowledge.engine_efficiency import efficiency, expected_share, family
from doctor.knowledge.engines import TRANSFORMERS_BNB_NF4
from doctor.model.engine_probe import EngineMeasurement, TransformersProbe
from doctor.model.engine_verdict import EngineVerdict
from doctor.model.ids import CauseId
from doctor.verdict.engine_gap import engine_gap
from doctor.verdict.engine_outcome import unmeasured

BUSY_PCT = 70.0  # below this median utilisation while decoding, the host (Python launching ops) sets the speed
FIRST_USE_RATIO = 0.8  # a warm-up this much slower than the settled runs paid a first-use cost


TransformersVerdict = EngineVerdict  # the name its callers knew


def attribute(probe: TransformersProbe, bandwidth_gbs: float, cc: str, fp16_slow: bool = False,
              measured: tuple[EngineMeasurement, ...] = ()) -> TransformersVerdict:
    if probe.outcome != "ok" or not probe.median_tok_s:
        return unmeasured(probe, "Transformers", "transformers")
    tok_s = probe.median_tok_s
    if not probe.bytes_per_token:
        return EngineVerdict("ok", f"{tok_s:g} tok/s; the bytes read per token were not counted, so no ceiling",
                             measured_tok_s=tok_s, engine="transformers", spread_pct=probe.spread_pct)
    ceiling = bandwidth_gbs * 1e9 / probe.bytes_per_token
    eff = tok_s / ceiling
    causes: list[dict] = []
    if probe.quant == "nf4":
        t = TRANSFORMERS_BNB_NF4
        causes.append({"cause": CauseId.KERNEL_PATH.value,
                       "text": f"bitsandbytes NF4 kernels: here x{1 / eff:.1f} below the ceiling; the reference story "
                               f"measured x{t.decode_time_factor:g} on a {t.card} ({t.what})", "source": t.source})
    if fp16_slow:
        causes.append({"cause": CauseId.KERNEL_PATH.value,
                       "text": "this card runs FP16 at 1/64 of its FP32 rate, and Transformers computes in FP16 here "
                               "(bitsandbytes' compute dtype, the model's dtype): arithmetic, not memory, sets the speed; "
                               "llama.cpp's Pascal path keeps FP16 off the hot path",
                       "source": efficiency("exllamav2", "pascal-fp16-slow")[0].source})
    if probe.gpu_util_pct is not None and probe.gpu_util_pct < BUSY_PCT:
        causes.append({"cause": CauseId.LAUNCH_BOUND.value,
                       "text": f"the GPU was busy only {probe.gpu_util_pct:.0f}% while decoding: Transformers launches "
                               "every op of every layer from Python each token (eager, no CUDA graphs), so the host "
                               "sets the speed", "source": "NVML, sampled during the probe's timed runs"})
    if probe.warmup_tok_s and probe.warmup_tok_s < FIRST_USE_RATIO * tok_s:
        faults = (f", {probe.warmup_faults_per_token:g} page faults per token against "
                  f"{max(probe.faults_per_token, default=0):g} in the timed runs") if probe.warmup_faults_per_token else ""
        causes.append({"cause": CauseId.HOST_BOUND.value,
                       "text": f"first use: the warm-up decoded at {probe.warmup_tok_s:g} tok/s{faults}; a first "
                               "generation pays it once per new length, the timed runs did not",
                       "source": "the probe's warm-up window"})
    bound = ""
    if probe.gpu_util_pct is not None and probe.gpu_util_pct < BUSY_PCT:
        bound = (f"an upper bound: this model decoded launch-bound here (GPU busy {probe.gpu_util_pct:.0f}%), where every "
                 "engine's speed is set by the host more than by the bytes the share is taken of")
    gap = engine_gap("transformers", tok_s, family(cc, fp16_slow), ceiling, measured, bound)
    backend = "Transformers + bitsandbytes NF4" if probe.quant == "nf4" else f"Transformers {probe.quant or 'FP16'}"
    share, _confidence, share_source = expected_share("transformers", family(cc, fp16_slow))
    return EngineVerdict("ok", f"{tok_s:g} tok/s with {backend} = {eff:.0%} of the {ceiling:.1f} tok/s ceiling "
                         f"({bandwidth_gbs:g} GB/s / {probe.bytes_per_token / 1e9:.2f} GB per token)",
                         ceiling_tok_s=round(ceiling, 1), measured_tok_s=tok_s, efficiency=round(eff, 3),
                         expected_efficiency=round(share, 3), expected_source=share_source, causes=tuple(causes),
                         engine_gap=gap, engine="transformers", spread_pct=probe.spread_pct)
