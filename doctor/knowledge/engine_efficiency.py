"""How close each engine's single-stream decode comes to the bandwidth ceiling on each GPU architecture.

expected tok/s = ceiling (bandwidth / bytes per token) x efficiency. Each row says where its figure comes from:
P = measured by this project's probes (file named), S = a published figure (the ceiling it implies worked out
here from the model's size and the card's datasheet bandwidth), K = no figure for this architecture: another
architecture's row assumed, and said so. Low/high span the figures the source gives; mid is the one used.
These are shares at short contexts; `plan`'s time model, with each engine's cost per past token, refits them where it
has long-context figures (doctor/knowledge/decode_context.py) and uses these rows elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass

from doctor.knowledge.engines import TRANSFORMERS_BNB_NF4


@dataclass(frozen=True)
class Efficiency:
    engine: str  # exllamav2 | llama.cpp
    family: str  # volta | turing | pascal-fp16-slow | pascal-gp100 | ampere | hopper
    low: float
    mid: float
    high: float
    how: str  # the figures behind it
    source: str
    confidence: str


STORY = "the reference story (docs/reference-story.md)"

EFFICIENCIES: tuple[Efficiency, ...] = (
    Efficiency("exllamav2", "volta", 0.63, 0.90, 0.90,
               "V100 16 GB, Qwen 27B: EXL2 3.75 bpw + Q8 cache 64 tok/s of a 71.0 tok/s ceiling (12.7 GB read per "
               "token at 256 tokens of context, 900 GB/s); EXL2 4.25 bpw + Q8 cache 40 tok/s of 63.1 (stage 2, before "
               "its last tuning)",
               STORY + " §3.4 and §4.2", "S"),
    Efficiency("llama.cpp", "volta", 0.53, 0.66, 0.80,
               "V100 16 GB, 27B GGUF Q4_K_M: 30-45 tok/s of a 56.6 tok/s ceiling (15.9 GB of GPU tensors at 900 GB/s)",
               STORY + " §1.4 (engine table)", "S"),
    Efficiency("exllamav2", "pascal-fp16-slow", 0.05, 0.06, 0.07,
               "Tesla P40, CodeLlama-34B EXL2 4.0 bpw: 1.19 tok/s of a 20 tok/s ceiling (17.1 GB at 346 GB/s); "
               "ExLlamaV2 computes in FP16, which GP102 runs at 1:64 of FP32",
               "https://github.com/turboderp-org/exllamav2/issues/40 ; https://github.com/turboderp/exllama/issues/27",
               "S"),
    Efficiency("llama.cpp", "pascal-fp16-slow", 0.60, 0.61, 0.62,
               "Tesla P40, LLaMA 7B tg128: Q4_0 56.8 tok/s of 92 (3.76 GB at 346 GB/s), Q4_K_S 54.2 of 90",
               "https://github.com/ggml-org/llama.cpp/pull/4766 (llama-bench table, P40 rows)", "S"),
    Efficiency("exllamav2", "hopper", 0.21, 0.28, 0.28,
               "H200, 64 layers 5120/21760 EXL2 4.0 bpw: ~104 tok/s of 377 (12.74 GB at 4800 GB/s); a 30-layer "
               "synthetic model 156.7 of 762 (host-bound)",
               "benchmarks/results/issue17-h200/README.md ; benchmarks/results/run2_probe_synthetic_nosampling_h200.json",
               "P"),
    Efficiency("llama.cpp", "hopper", 0.27, 0.31, 0.31,
               "H200, synthetic 27B Q4_K_M (15.90 GB of GPU tensors) llama-bench tg128: 92.7 tok/s with flash "
               "attention, 82.2 without, of a 302 tok/s ceiling",
               "/work/prep27/results/call1-h200/results.md (this project's device run, llama.cpp of "
               "llama-cpp-python 0.3.36)", "P"),
)

FAMILY_FALLBACK = {"turing": "volta", "pascal-gp100": "volta", "ampere": "volta", "ada": "volta"}


def family(cc: str, fp16_slow: bool) -> str:
    """The architecture family of a compute capability, as the efficiency table names it."""
    major, _, minor = cc.partition(".")
    if major == "6":
        return "pascal-fp16-slow" if fp16_slow or minor != "0" else "pascal-gp100"
    return {"7": "turing" if minor == "5" else "volta", "8": "ada" if minor == "9" else "ampere",
            "9": "hopper", "10": "hopper"}.get(major, "volta")


def efficiency(engine: str, fam: str) -> tuple[Efficiency, str]:
    """The row for this engine on this family, and a note when another family's row stands in for it."""
    for e in EFFICIENCIES:
        if e.engine == engine and e.family == fam:
            return e, ""
    other = FAMILY_FALLBACK.get(fam, "volta")
    for e in EFFICIENCIES:
        if e.engine == engine and e.family == other:
            return e, f"no {engine} figure for {fam}: the {other} figure is assumed"
    raise KeyError(f"no efficiency figure for {engine}")


def expected_share(engine: str, fam: str) -> tuple[float, str, str]:
    """(share of the ceiling, confidence, source) of an engine's single-stream decode on this family: the table's
    row (marked K with a note where another family's stands in), or Transformers + bitsandbytes NF4's measured cost.
    The one home of the engine-gap estimate: the `engine` check and the probe's verdict both read it."""
    if engine == "transformers":
        t = TRANSFORMERS_BNB_NF4
        return 1 / t.decode_time_factor, t.confidence, f"{t.source}; measured on a {t.card}"
    row, assumed = efficiency(engine, fam)
    return row.mid, ("K" if assumed else row.confidence), row.source + (f" ({assumed})" if assumed else "")
