"""Ollama: llama.cpp underneath, with its own runners (cuda_v12, cuda_v13), Modelfile parameters and OLLAMA_* settings."""

from doctor.engines.ollama.adapter import Ollama

ADAPTER = Ollama()
__all__ = ["ADAPTER", "Ollama"]
