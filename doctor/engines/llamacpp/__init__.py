"""llama.cpp: llama-server, llama-cli, llama-cpp-python and LM Studio's llama.cpp runtime (GGUF)."""

from doctor.engines.llamacpp.adapter import LlamaCpp

ADAPTER = LlamaCpp()
__all__ = ["ADAPTER", "LlamaCpp"]
