"""v100-doctor: diagnoses quantized-LLM setups on old data-centre GPUs (V100 first)."""

__version__ = "0.1.0"
