"""Which runtime and kernel path a weight format gets, judged per runtime x kernel x compute capability.

A row says what happens when `runtime` meets `fmt` on a card of cc in [min_cc, max_cc]. `outcome` is one of:
fast (fused quantized kernels), works (runs, not the fast path), slow (known crawl), refused (the runtime
rejects the card), cannot-load (the runtime cannot read this format at all).
"""

from __future__ import annotations

from dataclasses import dataclass

from doctor.knowledge.attention import cc_at_least
from doctor.knowledge.engines import ACT_ORDER_EXLLAMAV2

EXL2 = "https://github.com/turboderp-org/exllamav2/blob/v0.3.2/"
SEED = "the reference story (docs/reference-story.md), measured on a V100 16 GB"
H200_ACT_ORDER = (f"Measured by this project ({ACT_ORDER_EXLLAMAV2.card}; {ACT_ORDER_EXLLAMAV2.source.split(';')[0]}): "
                  f"{ACT_ORDER_EXLLAMAV2.spread.split('. 1.05')[0]}")


@dataclass(frozen=True)
class FormatPath:
    fmt: str  # exl2 | gptq | gptq-act-order | gptq-other-bits | awq | bnb-4bit | bnb-8bit | fp16 | bf16 | fp32 | gguf
    runtime: str
    kernel: str
    outcome: str
    detail: str
    source: str
    confidence: str
    min_cc: str = "0.0"
    max_cc: str = "99.0"

    def applies_to(self, cc: str | None) -> bool:
        if cc is None:
            return True
        return cc_at_least(cc, self.min_cc) and cc_at_least(self.max_cc, cc)


FORMAT_PATHS: tuple[FormatPath, ...] = (
    FormatPath("exl2", "ExLlamaV2", "EXL2 fused dequant-GEMV kernels + CUDA graphs", "fast",
               "the format ExLlamaV2's decode kernels are built for; all math in FP16",
               EXL2 + "exllamav2/module.py (.q_weight -> EXL2), cuda/q_gemm.cu", "P", min_cc="6.0"),
    FormatPath("exl2", "ExLlamaV2", "EXL2 kernels in FP16 on a 1:64-FP16 card", "slow",
               "GP102 cards (P40) run FP16 at 1/64 of FP32: ~1 tok/s on 34B",
               "https://github.com/turboderp-org/exllamav2/issues/40", "P", min_cc="6.1", max_cc="6.1"),
    FormatPath("exl2", "transformers / vLLM / llama.cpp", "none", "cannot-load",
               "EXL2 is ExLlamaV2's own format (also read by TabbyAPI, which embeds ExLlamaV2)",
               EXL2 + "README.md", "P"),
    # EXL3 is ExLlamaV3's format: its kernels use cp.async and mma.m16n8k16, which need sm_80
    FormatPath("exl3", "ExLlamaV3", "EXL3 trellis kernels", "fast", "ExLlamaV3's own format; needs cc 8.0 or newer",
               "https://github.com/turboderp-org/exllamav3 ; https://github.com/theroyallab/tabbyAPI/pull/463 "
               "(common/hardware.py rejects cc < 8.0)", "P", min_cc="8.0"),
    FormatPath("exl3", "ExLlamaV3", "none below cc 8.0", "refused",
               "ExLlamaV3 needs cc 8.0 or newer: its build fails with \"Feature 'cp.async' requires .target sm_80 or "
               "higher\"; use an EXL2 quant of the model with ExLlamaV2 on this card",
               "https://github.com/turboderp-org/exllamav3/issues/14", "P", max_cc="7.9"),
    FormatPath("exl3", "ExLlamaV2", "none", "cannot-load", "ExLlamaV2 reads EXL2 and GPTQ, not EXL3",
               EXL2 + "exllamav2/module.py", "P"),
    FormatPath("gptq", "ExLlamaV2", "GPTQ 4-bit kernels (q_gemm_kernel_gptq) + CUDA graphs", "fast",
               "ExLlamaV2 reads GPTQ from the tensor names (.qweight) and ignores quantize_config.json",
               EXL2 + "exllamav2/module.py, exllamav2/ext.py", "P", min_cc="6.0"),
    FormatPath("gptq-act-order", "ExLlamaV2", "GPTQ 4-bit kernels, g_idx reordered at load (make_sequential)", "fast",
               "act-order rows are permuted into contiguous groups once at load; the fast kernel gathers activations "
               "through q_perm. " + H200_ACT_ORDER,
               EXL2 + "exllamav2/exllamav2_ext/cuda/q_matrix.cu (QMatrix::make_sequential)", "P", min_cc="6.0"),
    FormatPath("gptq-act-order", "seed's engines (vLLM / ExLlamaV2, as used in the story)", "no fused dequant kernel", "slow",
               "the story says desc_act=True models 'ran poorly in vLLM and ExLlamaV2' and desc_act=False fixed it; "
               "for ExLlamaV2 0.3.2 the H200 measurement above contradicts it, for other engines it is not measured here",
               SEED, "S"),
    FormatPath("gptq-other-bits", "ExLlamaV2", "none (4-bit GPTQ only)", "cannot-load",
               "2/3/8-bit GPTQ fails the shape check: 'q_weight and gptq_qzeros have incompatible shapes'",
               EXL2 + "exllamav2/exllamav2_ext/ext_qmatrix.cpp; https://github.com/vllm-project/vllm/issues/2330", "P"),
    FormatPath("gptq", "vLLM", "GPTQ (exllama-derived) fused kernel", "fast",
               "vLLM's gptq method needs cc 6.0+; gptq_marlin needs newer cards",
               "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/layers/quantization/gptq.py (get_min_capability 60)",
               "P", min_cc="6.0"),
    FormatPath("awq", "ExLlamaV2", "none", "cannot-load",
               "no AWQ path: AWQ tensors (.qweight packed along the output dim) go to the GPTQ loader and fail "
               "'q_weight and gptq_qzeros have incompatible shapes'", EXL2 + "exllamav2/ext.py (no awq code)", "P"),
    FormatPath("awq", "vLLM", "AWQ kernel", "refused",
               "vLLM: 'The quantization method awq is not supported for the current GPU. Minimum capability: 75.'",
               "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/layers/quantization/awq.py (get_min_capability 75)",
               "P", max_cc="7.2"),
    FormatPath("awq", "vLLM", "AWQ kernel", "fast", "AWQ GEMM/GEMV kernels",
               "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/layers/quantization/awq.py", "P", min_cc="7.5"),
    FormatPath("awq", "transformers + AutoAWQ", "AWQ GEMM/GEMV kernels", "refused",
               "AutoAWQ: 'Your NVIDIA GPU(s) must be of Compute Capability 7.5'", "https://pypi.org/project/autoawq/0.2.4/",
               "P", max_cc="7.2"),
    FormatPath("bnb-4bit", "transformers + bitsandbytes", "per-op dequantize + matmul (no fused decode kernel)", "slow",
               "the story's starting point: 4 tok/s for a 27B NF4 model on a V100 16 GB; bnb 4-bit needs cc 6.0+",
               SEED + "; https://huggingface.co/docs/bitsandbytes/v0.50.0/installation", "S", min_cc="6.0"),
    FormatPath("bnb-4bit", "ExLlamaV2", "none", "cannot-load",
               "bnb stores packed uint8 .weight tensors: ExLlamaV2 raises ValueError('Unknown dtype ...') for U8",
               EXL2 + "exllamav2/stloader.py (only I32, I16, F16, BF16, F32)", "P"),
    FormatPath("bnb-4bit", "vLLM", "bitsandbytes kernels, activations cast to bfloat16", "slow",
               "allowed from cc 7.0, but _apply_4bit_weight casts activations to bf16, emulated below cc 8.0",
               "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/layers/quantization/bitsandbytes.py", "P",
               min_cc="7.0", max_cc="7.9"),
    FormatPath("bnb-8bit", "transformers + bitsandbytes", "LLM.int8()", "slow",
               "LLM.int8() needs int8 tensor cores (cc 7.5+); below that only the slow 8-bit matmul runs",
               "https://huggingface.co/docs/bitsandbytes/v0.50.0/installation", "P", max_cc="7.2"),
    FormatPath("fp16", "ExLlamaV2", "torch.matmul per layer (forward_torch), no CUDA graphs", "works",
               "unquantized layers load as FP16 nn.Linear; 2 bytes per weight, so a 27B model needs ~54 GB",
               EXL2 + "exllamav2/linear.py, exllamav2/attn.py (forward_torch)", "P"),
    FormatPath("bf16", "ExLlamaV2", "cast to FP16 at load, then torch.matmul", "works",
               "ExLlamaV2 casts BF16 to FP16 when loading, so no BF16 math runs on the card",
               EXL2 + "exllamav2/linear.py (.half())", "P"),
    FormatPath("fp32", "ExLlamaV2", "cast to FP16 at load, then torch.matmul", "works",
               "ExLlamaV2 casts FP32 to FP16 when loading (the GPU copy is half the file size)",
               EXL2 + "exllamav2/linear.py (.half())", "P"),
    FormatPath("gguf", "ExLlamaV2", "none", "cannot-load",
               "ExLlamaV2 reads only *.safetensors: 'No .safetensors files found'", EXL2 + "exllamav2/config.py", "P"),
    FormatPath("gguf", "llama.cpp", "GGML CUDA kernels (MMQ/MMVQ)", "fast",
               "llama.cpp's CUDA backend runs on sm_70 (CI logs: 'Device 0: Tesla V100-PCIE-16GB, compute capability 7.0')",
               "https://github.com/ggml-org/llama.cpp (ci/README, CUDA backend)", "S", min_cc="5.0"),
)


# The engine the doctor plans a format for (its memory budget, probe and knobs): ExLlamaV2, except for the formats
# of other engines' own: GGUF (llama.cpp, and Ollama built on it) and EXL3 (ExLlamaV3)
PLAN_ENGINES = {"gguf": "llama.cpp", "exl3": "ExLlamaV3"}


def plan_engine(fmt: str) -> str:
    return PLAN_ENGINES.get(fmt, "ExLlamaV2")


def paths_for(fmt: str, cc: str | None) -> list[FormatPath]:
    """Every known runtime path for this format on a card of this cc (all cards when cc is None)."""
    return [p for p in FORMAT_PATHS if p.fmt == fmt and p.applies_to(cc)]


BF16_EMULATION = ("Below cc 8.0 there is no native BF16: torch emulates it (is_bf16_supported() still returns True "
                  "through emulation), running it through FP32 paths, and vLLM refuses bf16 on Pascal/Volta/Turing",
                  "https://nvidia.github.io/TransformerEngine/support_matrix.html ; https://github.com/pytorch/pytorch/pull/115924 ; "
                  "vllm/platforms/cuda.py supported_dtypes", "P")
