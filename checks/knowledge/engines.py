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
    source="the reference story (../shared/seeds/000_aeadfd2c7dad11a3.txt §1.3): Qwen 27B, ~14 GB NF4, 4 tok/s on a V100",
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
