"""The verdict for a llama.cpp probe: the decode ceiling for the bytes this GGUF reads per token, and what explains
the gap for this engine: partial offload, flash attention off, the kernel path of this card (FP16 cuBLAS instead of
MMQ on a V100, FP16 at 1/64 on a P40), CUDA graphs off, and llama.cpp itself against what it reaches elsewhere on the
same architecture. A probe that did not finish gets no attribution: its outcome is the finding.
"""

from __future__ import annotations

from dataclasses import replace

from doctor.engines.llamacpp.support import llama_cpp_path
from doctor.knowledge import decode_fixed_cost as fc
from doctor.knowledge.arithmetic.gguf_budget import GgufOption, decode_ceiling, gguf_budget
from doctor.knowledge.engine_efficiency import Efficiency, efficiency, family
from doctor.knowledge.engines import LLAMA_CPP_FA_OFF_DECODE
from doctor.model.engine_probe import EngineMeasurement, LlamaCppProbe
from doctor.model.engine_verdict import EngineVerdict
from doctor.model.gguf import GgufShape, GgufWeights
from doctor.model.ids import CauseId
from doctor.verdict.engine_gap import engine_gap
from doctor.verdict.engine_outcome import unmeasured

LlamaCppVerdict = EngineVerdict  # the name its callers knew


def _offload(probe: LlamaCppProbe) -> tuple[int, int] | None:
    parts = probe.offloaded.split()[1].split("/") if probe.offloaded.startswith("offloaded ") else []
    return (int(parts[0]), int(parts[1])) if len(parts) == 2 and all(p.isdigit() for p in parts) else None


def _at_shape(expected: Efficiency, read_bytes: int, layers: int, bandwidth_gbs: float, weights: GgufWeights) -> Efficiency:
    """The family's share carried to this model's size: llama.cpp's fixed costs per layer and per token weigh more in
    a small model (doctor/knowledge/decode_fixed_cost.py), so a 1B model at 10% of its ceiling on an H200 is llama.cpp
    as usual, not a problem of the setup."""
    main_type = max(weights.bytes_by_type, key=lambda t: weights.bytes_by_type[t]) if weights.bytes_by_type else None
    at = fc.shares_at(read_bytes, layers, bandwidth_gbs, expected.family, main_type, expected.low, expected.mid,
                      expected.high)
    if at is None:
        return expected
    return replace(expected, low=round(at[0], 3), mid=round(at[1], 3), high=round(at[2], 3),
                   source=f"{expected.source}; at this model's size: {fc.RESULTS}")


def attribute(probe: LlamaCppProbe, shape: GgufShape, weights: GgufWeights, bandwidth_gbs: float, cc: str,
              env: dict[str, str] | None = None, fp16_slow: bool = False,
              measured: tuple[EngineMeasurement, ...] = ()) -> LlamaCppVerdict:
    if probe.outcome != "ok" or not probe.median_tok_s:
        return unmeasured(probe, "llama.cpp", "llama.cpp")
    env = env or {}
    off = _offload(probe)
    ngl = None if off is None or off[0] >= off[1] else off[0]
    budget = gguf_budget(shape, weights, GgufOption(n_ctx=max(probe.n_ctx, 1), cache_type_k=probe.cache_type_k,
                                                    cache_type_v=probe.cache_type_v, flash_attn=probe.flash_attn != "off",
                                                    n_gpu_layers=ngl))
    causes: list[dict] = []
    if ngl is not None:
        causes.append({"cause": CauseId.CPU_OFFLOAD.value, "text": f"partial offload: {probe.offloaded}; the other layers "
                       "decode from host memory, whose bandwidth then sets the speed", "source": "the probe's llama.cpp log"})
        return EngineVerdict("ok", f"{probe.median_tok_s:g} tok/s with {probe.offloaded}: the layers in host memory set "
                             "the speed, not the card", measured_tok_s=probe.median_tok_s, causes=tuple(causes),
                             engine="llama.cpp", spread_pct=probe.spread_pct)
    ceiling = decode_ceiling(budget, bandwidth_gbs)
    eff = probe.median_tok_s / ceiling
    expected, assumed = efficiency("llama.cpp", family(cc, fp16_slow))
    expected = _at_shape(expected, budget.read_gpu_bytes, shape.n_layer, bandwidth_gbs, weights)
    if probe.flash_attn == "off":
        factor, src = LLAMA_CPP_FA_OFF_DECODE
        causes.append({"cause": CauseId.KERNEL_PATH.value, "text": f"flash attention off: llama.cpp's own kernels would "
                       f"decode about x{factor:.2f} faster (measured on an H200 at a short context)", "source": src})
    path = llama_cpp_path(cc)
    if path is not None:
        causes.append({"cause": CauseId.KERNEL_PATH.value, "text": f"kernel path on cc {cc}: {path.kernels}",
                       "source": path.source})
    if env.get("GGML_CUDA_DISABLE_GRAPHS"):
        causes.append({"cause": CauseId.LAUNCH_BOUND.value, "text": "CUDA graphs are off (GGML_CUDA_DISABLE_GRAPHS): "
                       "every token launches its kernels one by one", "source": "https://github.com/ggml-org/llama.cpp/pull/25749"})
    verdict = ("as llama.cpp does elsewhere on this architecture" if eff >= expected.low
               else "below what llama.cpp reaches elsewhere on this architecture")
    causes.append({"cause": CauseId.UNEXPLAINED.value if eff < expected.low else "engine",
                   "text": f"llama.cpp itself: {eff:.0%} of the ceiling, {verdict} ({expected.low:.0%}-{expected.high:.0%}"
                           f"{'; ' + assumed if assumed else ''})", "source": expected.source})
    gap = engine_gap("llama.cpp", probe.median_tok_s, family(cc, fp16_slow), ceiling, measured)
    return EngineVerdict("ok", f"{probe.median_tok_s:g} tok/s = {eff:.0%} of the {ceiling:.1f} tok/s ceiling "
                         f"({bandwidth_gbs:g} GB/s / {budget.read_gpu_bytes / 1e9:.2f} GB per token), {verdict}",
                         ceiling_tok_s=round(ceiling, 1), measured_tok_s=probe.median_tok_s, efficiency=round(eff, 3),
                         expected_efficiency=expected.mid, expected_source=expected.source, causes=tuple(causes),
                         engine_gap=gap, engine="llama.cpp", spread_pct=probe.spread_pct)
