"""vLLM: on torch, its own wheels' kernels; 0.19.x is the last release with Volta (sm_70) kernels."""

from doctor.engines.vllm.adapter import Vllm

ADAPTER = Vllm()
__all__ = ["ADAPTER", "Vllm"]
