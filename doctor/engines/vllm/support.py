"""vLLM's support table rows: 0.19.x, the last release with Volta kernels, and 0.20.0 on (issue 27)."""

from __future__ import annotations

from doctor.knowledge.engines import EngineSupport

VLLM_0_19 = EngineSupport(
    "vllm-0.19", "vLLM", "0.19.x and older (prebuilt wheels)", "7.0", ("gptq", "awq", "fp16", "bf16"),
    "no kernel image", "llama.cpp",
    "https://docs.vllm.ai/en/v0.14.0/getting_started/installation/gpu/ (compute capability 7.0 or higher)", "S")

VLLM_0_20 = EngineSupport(
    "vllm-0.20", "vLLM", "0.20.0 and newer", "7.5", ("gptq", "awq", "fp16", "bf16"),
    "\"no kernel image is available\": 0.20.0 dropped 7.0 from TORCH_CUDA_ARCH_LIST",
    "vLLM 0.19.x (pip install 'vllm<0.20'), the 1Cat-vLLM V100 fork, or llama.cpp",
    "https://github.com/vllm-project/vllm/pull/39878 ; https://raw.githubusercontent.com/vllm-project/vllm/v0.21.0/docs/"
    "getting_started/installation/gpu.cuda.inc.md (7.5 or higher)", "S")

SUPPORT = (VLLM_0_19, VLLM_0_20)
