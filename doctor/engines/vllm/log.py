"""How a vLLM log shows itself (its logger's "LEVEL MM-DD hh:mm:ss [file.py:N]" lines, its process tags, its paths) and
its fixes: `vllm serve` arguments, VLLM_* settings, and the last release with kernels for the card."""

from __future__ import annotations

from doctor.engines.log_types import EngineLog, LogFix, LogMarker
from doctor.engines.vllm.adapter import LAST_FOR_SM70, Vllm

V = Vllm.vocabulary

MARKERS = (
    LogMarker(r"\b(?:INFO|WARNING|ERROR|DEBUG|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[?[\w./-]+\.py:\d+\]? ",
              "vLLM's logger format (LEVEL MM-DD hh:mm:ss [file.py:N])", decisive=True),
    LogMarker(r"\bvLLM API server version\b|\((?:EngineCore\w*|VllmWorker\w*|APIServer) pid=\d+\)|[/\\]vllm[/\\]|\bvllm serve\b"
              r"|\bvllm\.(?:entrypoints|engine|v1)\b", "vLLM's own lines", decisive=True),
)

FIXES = {
    "oom": LogFix(f"vLLM could not fit the weights and its KV cache: lower the context ({V.context.format(n=8192)}), set "
                  "--gpu-memory-utilization to the share that is free (default 0.9), add --enforce-eager (no CUDA-graph "
                  f"memory), or serve {V.smaller_model}; {V.restart}."),
    "no-kernel": LogFix(f"This vLLM has no kernels for the card: vLLM 0.20.0 dropped cc 7.0 from its wheels, so install "
                        f"the last release with them: pip install '{LAST_FOR_SM70}' (no vLLM release has kernels below cc "
                        "7.0: there, run a GGUF under llama.cpp).", (f"pip install '{LAST_FOR_SM70}'",)),
    "bf16": LogFix("Serve in float16: vllm serve MODEL --dtype half (LLM(..., dtype=\"half\")); bf16 needs cc 8.0+."),
    "flash-attn": LogFix("vLLM picks another attention backend below cc 8.0 by itself: unset a VLLM_ATTENTION_BACKEND that "
                         "forces FLASH_ATTN or FLASHINFER, and serve with --dtype half."),
    "driver": LogFix("vLLM's CUDA (that of the torch it installed) is newer than the NVIDIA driver supports: update the "
                     "driver, or install the vLLM build for the CUDA that `nvidia-smi` shows top right."),
    "cuda-runtime-missing": LogFix("vLLM's compiled ops were built against a CUDA runtime that is not installed: reinstall "
                                   "vLLM into a clean environment so that pip pulls the torch it was built for (with its "
                                   f"nvidia-cuda-runtime of the same major), keeping the card's last release "
                                   f"('{LAST_FOR_SM70}' for cc 7.0), or use the vllm/vllm-openai image of that release."),
}

LOG = EngineLog(Vllm.id, "vLLM", MARKERS, FIXES, uses_torch=True, precedence=30)
