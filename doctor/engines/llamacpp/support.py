"""llama.cpp's support table row and its kernel path per architecture, each with its source (issue 27)."""

from __future__ import annotations

from dataclasses import dataclass

from doctor.knowledge.engines import EngineSupport, cc_tuple

LLAMA_CPP = EngineSupport(
    "llama.cpp", "llama.cpp", "current (CUDA builds)", "5.0", ("gguf",),
    "older cards are not the limit; a build without code for the card is (\"ggml was not compiled with any CUDA arch\")",
    "build with -DCMAKE_CUDA_ARCHITECTURES naming the card",
    "https://github.com/ggml-org/llama.cpp/blob/master/docs/build.md ; V100 takes FP16 cuBLAS instead of MMQ: "
    "https://github.com/ggml-org/llama.cpp/pull/8075 ; Volta flash attention: https://github.com/ggml-org/llama.cpp/pull/17505",
    "S")

SUPPORT = (LLAMA_CPP,)


# llama.cpp's kernel path and flash attention per architecture (single-stream decode of quantized weights)
@dataclass(frozen=True)
class LlamaCppPath:
    min_cc: str
    kernels: str  # what runs the quantized matmuls
    flash_attn: str  # llama.cpp's own FA kernels here (not the flash-attn package)
    note: str
    source: str


LLAMA_CPP_PATHS: tuple[LlamaCppPath, ...] = (  # highest first
    LlamaCppPath("8.0", "MMQ (int8 tensor cores)", "yes (mma kernels)", "",
                 "https://github.com/ggml-org/llama.cpp/pull/8075"),
    LlamaCppPath("7.5", "MMQ (int8 tensor cores); CUDA graphs on", "yes (mma kernels)", "",
                 "https://github.com/ggml-org/llama.cpp/pull/8075 ; https://github.com/ggml-org/llama.cpp/pull/25749"),
    LlamaCppPath("7.0", "FP16 cuBLAS for prompt batches (no int8 tensor cores; MMQ only with GGML_CUDA_FORCE_MMQ, lower VRAM "
                 "but slower large batches), MMVQ for decode; CUDA graphs on", "yes (Volta mma kernels)",
                 "a published 27B Q4_K_M on a V100-32GB decodes 33.3 tok/s, about 62% of its ceiling",
                 "https://github.com/ggml-org/llama.cpp/pull/8075 ; https://github.com/ggml-org/llama.cpp/pull/17505 ; "
                 "https://github.com/ggml-org/llama.cpp/pull/25749 ; sudoingX/qwen38-mtp README.md:121"),
    LlamaCppPath("6.1", "MMQ with dp4a; FP16 at 1/64 rate, so keep FP16 off the hot path; CUDA graphs off on Pascal",
                 "vector (tile) kernels only", "one P40 decodes a 14B Q4_K_M at about 16 tok/s",
                 "https://localaimaster.com/blog/tesla-p40-local-llm ; https://github.com/ggml-org/llama.cpp/pull/27721 "
                 "(Pascal CUDA graphs, open) ; https://insiderllm.com/guides/used-tesla-p40-local-ai"),
    LlamaCppPath("5.0", "MMVQ/dequantize + cuBLAS", "vector kernels only", "", "https://github.com/ggml-org/llama.cpp/pull/8075"),
)


def llama_cpp_path(cc: str) -> LlamaCppPath | None:
    return next((p for p in LLAMA_CPP_PATHS if cc_tuple(cc) >= cc_tuple(p.min_cc)), None)


# quantized V cache needs flash attention: llama.cpp refuses the context otherwise
QUANT_V_NEEDS_FA = ("V cache quantization requires flash_attn",
                    "llama.cpp src/llama-context.cpp (llama_init_from_model); https://github.com/ggml-org/llama.cpp/pull/7527")
