"""How fast the host reads weights kept in system RAM, for a plan that offloads part of a model to it.

With llama.cpp's --n-cpu-moe / -ot ".ffn_.*_exps.=CPU" (or -ngl below the layer count) the CPU computes those
layers' matrix products itself for a decoded token: ggml-cuda offloads an op to the GPU (copying its weights over
PCIe) only from a batch of 32 rows (ggml/src/ggml-cuda/ggml-cuda.cu, ggml_backend_cuda_device_offload_op,
min_batch_size = 32). So decode reads those weights at the host's memory bandwidth; PCIe carries only the hidden
state, and the weights cross it during prompt processing (batches of 32 tokens and more).

`plan` runs before the download and often for another machine, so the host's bandwidth is not gathered: it is an
assumption, stated with its range, for a host a V100 sits in (from a desktop's two DDR4 channels to a server
socket's six). The share of it a CPU reaches on quantized expert products is fitted on one published
measurement: llmfit PR #755 (https://github.com/AlexsJones/llmfit/pull/755), an RTX 2080 8 GB with an i9-10900X
(quad-channel DDR4, ~102 GB/s measured), Qwen3-30B-A3B Q4_K_M with -ngl 99 --n-cpu-moe 36: 36.7 tok/s decode. Our
arithmetic puts 0.82 GB of active expert reads per token in host RAM there and ~4 ms of GPU time, which leaves
~23 ms per token: 35.7 GB/s, 0.35 of the host's bandwidth.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HostRate:
    low: float
    mid: float
    high: float
    what: str
    source: str
    confidence: str  # S published, K assumed


HOST_BANDWIDTH_GBS = HostRate(
    35.0, 60.0, 110.0,
    "host memory bandwidth assumed (not read: plan does not measure the host): 35 GB/s (two DDR4-3200 channels, "
    "as STREAM measures them) to 110 GB/s (six DDR4-2666 channels of one Xeon socket), 60 in the middle",
    "DDR4 peak = channels x MT/s x 8 bytes (JEDEC JESD79-4); STREAM reaches about 80% of it",
    "K")
HOST_READ_SHARE = HostRate(
    0.25, 0.35, 0.5,
    "the share of host bandwidth llama.cpp's CPU expert products reach while decoding",
    "fitted on llmfit PR #755 (https://github.com/AlexsJones/llmfit/pull/755): RTX 2080 + i9-10900X, "
    "Qwen3-30B-A3B Q4_K_M --n-cpu-moe 36, 36.7 tok/s measured; 0.35, widened to 0.25-0.5 for other CPUs",
    "S")
OFFLOAD_OP_MIN_BATCH = 32  # ggml-cuda.cu ggml_backend_cuda_device_offload_op
PCIE_SOURCE = ("ggml/src/ggml-cuda/ggml-cuda.cu ggml_backend_cuda_device_offload_op (min_batch_size = 32): "
               "decode runs host-resident weights on the CPU; prompt batches of 32+ tokens copy them over PCIe")
# Ollama has no per-tensor placement: its only control is num_gpu (whole layers on the GPU). Expert offload was
# asked for (https://github.com/ollama/ollama/issues/11772, open) and a PR declined by a maintainer: "we want to be
# able to configure this automatically based on available memory" (https://github.com/ollama/ollama/pull/12333)
OLLAMA_OFFLOAD = ("Ollama cannot keep only the experts in host RAM (ollama/ollama#11772 is open; PR #12333 was "
                  "declined): its one control is num_gpu, how many whole layers go to the GPU (it picks that itself unless set)")


def effective_host_gbs() -> tuple[float, float, float]:
    """(slow, mid, fast) GB/s at which decode reads host-resident weights: bandwidth x the share reached."""
    b, s = HOST_BANDWIDTH_GBS, HOST_READ_SHARE
    return b.low * s.low, b.mid * s.mid, b.high * s.high
