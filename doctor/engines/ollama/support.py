"""Ollama's support table rows, one per CUDA runner (issue 27)."""

from __future__ import annotations

from doctor.knowledge.engines import EngineDriverFloor, EngineSupport

OLLAMA_CUDA_V12 = EngineSupport(
    "ollama-cuda_v12", "Ollama (cuda_v12 runner)", "0.33", "5.0", ("gguf",),
    "driver floor 550 (cc 5.0-6.2: 570)", "a driver of branch 550+ (570+ for Pascal)",
    "https://github.com/ollama/ollama/blob/main/docs/gpu.mdx ; llama/server/CMakePresets.json (cuda_v12: "
    "50-virtual;52-virtual;60;61;70;75...)", "S")

OLLAMA_CUDA_V13 = EngineSupport(
    "ollama-cuda_v13", "Ollama (cuda_v13 runner)", "0.33", "7.5", ("gguf",),
    "the card is skipped silently and the model runs on the CPU (library=cpu)",
    "install Ollama's cuda_v12 runner (the full Linux tarball, not a CUDA-13-only image)",
    "https://github.com/ollama/ollama/issues/17766 ; llama/server/CMakePresets.json (cuda_v13 starts at 75)", "S")

SUPPORT = (OLLAMA_CUDA_V12, OLLAMA_CUDA_V13)
RUNNER_SUPPORT = {"cuda_v12": OLLAMA_CUDA_V12, "cuda_v13": OLLAMA_CUDA_V13}  # its runner folders' names

OLLAMA_DRIVER_FLOOR = EngineDriverFloor(
    "Ollama", "0.30.0", 550, 570, "6.2",
    "Ollama filters out every GPU (OLLAMA_DEBUG=2 logs \"NVIDIA driver too old\", supported=map[]) and runs the model "
    "on the CPU, without an error",
    "https://github.com/ollama/ollama/issues/17290 (from 0.30.0 a 535 driver filtered both GPUs out; 580 fixed it) ; "
    "https://github.com/ollama/ollama/issues/16415 (0.30.0 logs \"NVIDIA driver too old\" required_driver=\"570 or newer\" "
    "on cc 6.1) ; "
    "https://github.com/ollama/ollama/blob/main/docs/gpu.mdx (driver 550; compute capability 5.0 through 6.2: 570)", "S")

# OLLAMA_LLM_LIBRARY names the runner Ollama loads, bypassing its GPU detection: a cpu* value keeps every layer on
# the CPU whatever the card
OLLAMA_LLM_LIBRARY = ("OLLAMA_LLM_LIBRARY",
                      "https://github.com/ollama/ollama/blob/main/docs/troubleshooting.mdx (Experimental LLM Library "
                      "Override: \"OLLAMA_LLM_LIBRARY=\\\"cpu_avx2\\\" ollama serve\" forces the CPU library)", "S")
