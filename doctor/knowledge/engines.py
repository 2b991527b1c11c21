"""Measured costs of a format's kernel path in a given engine: what the verdict may blame, and by how much.

"desc_act is slow" is true in some engines and false in others, so each claim is a measurement
with its engine, version, card and source. Confidence: P = measured by this project (benchmark
and result file named), S = a published figure (e.g. the reference story), K = recalled.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KernelPathCost:
    key: str
    engine: str  # "exllamav2", "transformers+bitsandbytes"
    versions: str  # which versions the measurement covers
    what: str
    decode_time_factor: float  # decode time with this path / decode time without it (1.0 = free)
    spread: str  # how precise the factor is
    card: str
    source: str
    confidence: str


ACT_ORDER_EXLLAMAV2 = KernelPathCost(
    key="gptq-act-order", engine="exllamav2", versions="0.3.2",
    what="GPTQ 4-bit with act-order (desc_act, a shuffled g_idx) vs the same model without g_idx",
    decode_time_factor=1.05,
    spread=("GPU kernel time per token: GEMM kernels 1.954 vs 1.860 ms (x1.051), all kernels x1.041, torch.profiler over "
            "32 tokens after 300; wall clock x0.996 (344.6 vs 343.4 tok/s, within run-to-run spread) because a 16-layer "
            "model on an H200 is host-bound, which hides kernel time. 1.05 is the cost where decode is bandwidth-bound "
            "(a 27B on a 16 GB card): small, not the slowdown the reference story reports"),
    card="NVIDIA H200 (sm_90), 16 layers of 5120/21760, group 128",
    source=("benchmarks/act_order.py -> benchmarks/results/run1_act_order_h200.json (this project, 2026-12-02); "
            "mechanism: exllamav2 ext.py make_q_matrix reorders rows at load (q_perm), then decode runs the same fused "
            "GPTQ kernel with an indexed activation load (q_gemm_kernel_gptq.cuh)"),
    confidence="P",
)

TRANSFORMERS_BNB_NF4 = KernelPathCost(
    key="bnb-nf4-transformers", engine="transformers+bitsandbytes", versions="as used in the reference story",
    what="HF Transformers eager decode with bitsandbytes 4-bit (NF4) weights, dequantized per op",
    decode_time_factor=round((900 / 14.0) / 4.0, 1),  # ceiling 64 tok/s at ~14 GB vs 4 tok/s measured
    spread=("one published figure; the demo's seed-1 example shows the same figure, so its share there holds by "
            "construction"),
    card="Tesla V100 16 GB",
    source="the reference story (docs/reference-story.md, its first stage): Qwen 27B, ~14 GB NF4, 4 tok/s on a V100",
    confidence="S",
)

KERNEL_PATHS: tuple[KernelPathCost, ...] = (ACT_ORDER_EXLLAMAV2, TRANSFORMERS_BNB_NF4)


def kernel_path_cost(engine: str, fmt: str, act_order: bool | None) -> KernelPathCost | None:
    """The measured cost that applies to this engine and format, if any."""
    engine = engine.lower()
    if engine.startswith("transformers") and "bitsandbytes" in engine:
        return TRANSFORMERS_BNB_NF4
    if engine.startswith("exllamav2") and fmt == "gptq" and act_order:
        return ACT_ORDER_EXLLAMAV2
    return None


@dataclass(frozen=True)
class FirstUseTrap:
    key: str
    what: str
    applies: str
    measured: str
    fix: str
    source: str
    confidence: str


CUDNN_SDPA_PER_LENGTH = FirstUseTrap(
    key="cudnn-sdpa-per-length",
    what=("torch's scaled_dot_product_attention picks cuDNN attention first on sm_90/sm_100 (recent torch with cuDNN "
          "> 9.15), and cuDNN builds an execution graph for every new shape. ExLlamaV2 without flash-attn calls SDPA "
          "with a KV length one longer each token, so every token of a fresh generation builds a graph on the host"),
    applies="ExLlamaV2 with attention 'torch SDPA' (no flash-attn, no xformers) on compute capability 9.x or 10.x",
    measured=("H200, torch 2.11+cu130, exllamav2 0.3.2: first time at each length 13-23 tok/s, 250-300 minor page faults "
              "per token, GPU 4-8% busy, SDPA 1.2 ms per call; the same lengths again 156-266 tok/s, no faults; with "
              "torch.backends.cuda.enable_cudnn_sdp(False) first-time lengths ran at 106-119 tok/s, 0-7 faults per token "
              "(SDPA 55 us per call)"),
    fix=("torch.backends.cuda.enable_cudnn_sdp(False) before the model loads (measured), or TORCH_CUDNN_SDPA_DEPRIORITIZED=1 "
         "for torch versions that read it (torch source, not measured here), or flash-attn, which ExLlamaV2 then uses "
         "instead of SDPA"),
    source=("benchmarks/first_model_trap.py -> benchmarks/results/run1_trap_h200.json, run2_trap_cudnn_off_h200.json and "
            "the probes' warm-ups in run2_probe_synthetic_h200.json (this project, 2026-12-02); priority order: "
            "https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/native/transformers/cuda/sdp_utils.cpp "
            "(check_prefer_cudnn_attention)"),
    confidence="P",
)

# ExLlamaV2 0.3.2's ext.py JIT-compiles 19 .cpp + 28 .cu translation units on its first import
# (source: https://github.com/turboderp-org/exllamav2/blob/v0.3.2/exllamav2/ext.py, its sources list; P)
JIT_UNITS = 47


@dataclass(frozen=True)
class CompilerMinimum:
    """The oldest card a kernel compiler an engine relies on still builds for, and how to run without it."""

    compiler: str
    used_by: str
    min_cc: str
    without_it: str  # the fix: how to run on an older card
    source: str
    confidence: str


TRITON = CompilerMinimum(
    compiler="Triton",
    used_by="torch.compile (Inductor) and vLLM's compiled and Triton kernels",
    min_cc="7.0",
    without_it=("Run eager, without torch.compile: vLLM `--enforce-eager`; your own script: drop torch.compile, or "
                "export TORCHDYNAMO_DISABLE=1. ExLlamaV2 does not use Triton, so it is not affected."),
    source=("https://github.com/pytorch/pytorch/blob/main/torch/_inductor/scheduler.py (create_backend: \"Triton only "
            "supports devices of CUDA Capability >= 7.0\"); https://github.com/vllm-project/vllm/issues/13202 (P40, "
            "vLLM 0.7.2); https://github.com/MIC-DKFZ/nnUNet/issues/2188 (TORCHDYNAMO_DISABLE=1)"),
    confidence="P",
)


# ---- which cards an engine (and version) supports: issue 27 --------------------------------------------------
# The row type; each engine's rows live in its package (doctor/engines/<engine>/support.py, EngineAdapter.support).
# Sources collected in /work/shared/notes/engines-2026.md (public repositories and docs to about Sept 2026).


@dataclass(frozen=True)
class EngineSupport:
    """The oldest card an engine (at these versions) runs on, what a user sees below it, and where to go instead."""

    key: str
    engine: str
    versions: str
    min_cc: str  # the lowest compute capability it supports
    formats: tuple[str, ...]
    below: str  # what happens on an older card (the user's error, or the silent fallback)
    instead: str  # the fix for an older card
    source: str
    confidence: str
    experimental_from: str = ""  # cc with experimental support only (exllamav3's Turing)


# engines with no package under doctor/engines/ yet (each packaged engine keeps its rows in its own support.py,
# EngineAdapter.support): their floors, kept with their sources for the day one is added
UNPACKAGED_SUPPORT: tuple[EngineSupport, ...] = (
    EngineSupport(
        "sglang", "SGLang", "current", "7.5", ("gptq", "awq", "fp16", "bf16"),
        "\"SGlang only supports sm 75 and above\"", "llama.cpp or vLLM 0.19",
        "https://github.com/opendatalab/MinerU/issues/3416 ; https://github.com/sgl-project/sglang/issues/24224", "S"),
    EngineSupport(
        "tensorrt-llm", "TensorRT-LLM", "0.14 and newer", "8.0", ("trt",),
        "Volta support removed; T4 not supported since 0.14", "llama.cpp",
        "https://github.com/NVIDIA/TensorRT-LLM/pull/2389 ; https://github.com/NVIDIA/TensorRT-LLM/issues/2620", "S"),
)


def cc_tuple(cc: str) -> tuple[int, int]:
    major, _, minor = cc.partition(".")
    return int(major), int(minor or 0)


def supports(row: EngineSupport, cc: str) -> bool:
    return cc_tuple(cc) >= cc_tuple(row.min_cc)


def runs_on(cubins: tuple[int, ...], ptx: tuple[int, ...], cc: str) -> str | None:
    """How a CUDA library's code runs on a card: 'sm_70' (machine code for it: same major, minor not above the
    card's), 'compute_61 PTX (JIT)' (PTX no newer than the card), or None (no kernel image).
    Source: CUDA C Programming Guide, binary and PTX compatibility (https://docs.nvidia.com/cuda/cuda-c-programming-guide/)."""
    major, minor = cc_tuple(cc)
    card = major * 10 + minor
    ok = [a for a in cubins if a // 10 == major and a % 10 <= minor]
    if ok:
        return f"sm_{max(ok)}"
    jit = [a for a in ptx if a <= card]
    if jit:
        return f"compute_{max(jit)} PTX (JIT-compiled at first load)"
    return None


# measured by this project: what llama.cpp's options cost in decode on the same card (H200, 27B-shape Q4_K_M)
LLAMA_CPP_FA_OFF_DECODE = (92.67 / 82.21, "llama-bench tg128, -fa on 92.67 vs off 82.21 tok/s, 64-layer 27B-shape Q4_K_M, "
                           "H200 (/work/prep27/results/call1-h200/bench.jsonl, this project, 2026-12-03)")
LLAMA_CPP_Q8_KV_DECODE = (92.67 / 86.88, "llama-bench tg128, f16 K/V 92.67 vs q8_0 86.88 tok/s, same run")


# ---- what an engine needs of the driver, and settings that keep it off the GPU: issue 35 ------------------------
@dataclass(frozen=True)
class EngineDriverFloor:
    """The oldest driver branch an engine's bundled CUDA runtime accepts; below it the engine does not use the GPU."""

    engine: str
    from_version: str  # the first release that enforces this floor
    branch: int  # the branch it needs
    old_cards_branch: int  # the branch it needs on cards up to old_cards_max_cc
    old_cards_max_cc: str
    below: str  # what a user sees below the floor
    source: str
    confidence: str

    def needs(self, cc: str) -> int:
        return self.old_cards_branch if cc_tuple(cc) <= cc_tuple(self.old_cards_max_cc) else self.branch
