"""A speculative-decoding draft model's VRAM (TabbyAPI draft_model, llama.cpp -md): its weights and its own cache
at the same context, on the first GPU. TabbyAPI's draft cache defaults to FP16 (draft_cache_mode)."""

from __future__ import annotations

from doctor.knowledge.arithmetic.model_bytes import dims, model_bytes
from doctor.knowledge.kv_cache import KV_CACHE_MODES
from doctor.model.model_dir import ModelConfig, ModelFacts, QuantFacts
from doctor.model.quant_plan import QuantCandidate


def draft_weights(config: ModelConfig, version: QuantCandidate | None) -> tuple[int, int]:
    """(the draft's weight bytes on the GPU, its layers): what each of its tokens reads, for the speed-up estimate."""
    method = version.fmt if version and version.fmt in ("exl2", "gptq", "awq") else "fp16"
    bits = version.bpw if version and version.bpw else 16.0
    quant = QuantFacts(method=method, declared_in="plan", bits=bits, group_size=(version.group_size if version else None)
                       or 128)
    mb = model_bytes(ModelFacts(path="draft", exists=False, kind="planned", config=config, quant=quant))
    return mb.gpu_bytes, dims(config).layers


def draft_bytes(config: ModelConfig, version: QuantCandidate | None, context: int) -> int:
    d = dims(config)
    return draft_weights(config, version)[0] + KV_CACHE_MODES["fp16"].bytes_per_token(d.layers, d.kv_heads,
                                                                                     d.head_dim) * context
