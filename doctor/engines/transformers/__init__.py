"""Hugging Face Transformers on torch, with bitsandbytes (NF4/int8), GPTQ/AWQ kernels or plain fp16 weights."""

from doctor.engines.transformers.adapter import Transformers

ADAPTER = Transformers()
__all__ = ["ADAPTER", "Transformers"]
