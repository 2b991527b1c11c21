"""What each engine's process holds on the GPU outside the buffers it sizes itself (the CUDA context, cuBLAS, kernel
images, the engine's pools), per engine and card generation: the allowance a plan or a fit check adds to the buffers.

ExLlamaV2's figures live with its other reserves (doctor/knowledge/exllamav2_memory.py); llama.cpp's are measured
here on the H200 and estimated elsewhere. A (value, source, confidence) tuple as the other knowledge rows.
"""

from __future__ import annotations

from doctor.knowledge.exllamav2_memory import CUDA_CONTEXT_HOPPER_MIB, CUDA_CONTEXT_MIB
from doctor.model.units import MIB

# NVML's peak less the reading before llama.cpp started, less every buffer it printed (model, K/V, compute):
# 623-625 MiB over nine options of issue 28 (the CUDA pools grow 88-92 MiB during the prefill), 610-614 MiB on the
# three shapes of issue 37's check. The largest is the allowance: a plan must not come out short.
LLAMA_CPP_HOPPER_MIB = (625, "measured on the H200 (driver 580, llama.cpp of llama-cpp-python 0.3.36): 623-625 MiB "
                        "outside the printed buffers over nine options (benchmarks/results/issue28-accuracy/README.md), "
                        "610-614 MiB on three other shapes (issue 37)", "P")
LLAMA_CPP_OTHER_MIB = (CUDA_CONTEXT_MIB[0], "estimate for pre-Hopper cards, not measured with llama.cpp there: "
                       + CUDA_CONTEXT_MIB[1], "K")


def allowance(engine: str, cc: str | None) -> tuple[int, str, str]:
    """(MiB, source, confidence) this engine's process holds outside its own buffers on a card of this compute
    capability (an unknown card: the pre-Hopper estimate). Engines built on llama.cpp (Ollama) take its figure."""
    major = int(cc.split(".")[0]) if cc and cc.split(".")[0].isdigit() else 0
    if engine in ("llama.cpp", "ollama"):
        return LLAMA_CPP_HOPPER_MIB if major >= 9 else LLAMA_CPP_OTHER_MIB
    return CUDA_CONTEXT_HOPPER_MIB if major >= 9 else CUDA_CONTEXT_MIB


def context_bytes(engine: str, cc: str | None) -> int:
    return allowance(engine, cc)[0] * MIB
