"""llama.cpp's VRAM for a GGUF option planned from the model's shape, before any file is read.

KV cache and compute buffer: issue 27's formulas (doctor/knowledge/arithmetic/gguf_budget.py, fitted on llama.cpp's own
printed sizes). Weights: llama-quantize's mix for the file type (gguf_budget.quant_weights: the GPU tensors as
ggml-cuda allocates them; the token embedding stays on the host) where the mix is known, else the file's size less
the embedding. The CUDA context: llama.cpp's own allowance (doctor/knowledge/cuda_context.py).
A split is llama.cpp's default --tensor-split: layers in proportion to each GPU's memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from doctor.knowledge.arithmetic import gguf_budget as g27
from doctor.knowledge.arithmetic.gguf_mix import BASE as MIX_TYPES
from doctor.knowledge.arithmetic.gguf_mix import gguf_mix
from doctor.knowledge.arithmetic.model_shape import ModelDims, parameter_count
from doctor.model.gguf import GgufShape as HeaderShape

N_UBATCH = 512  # llama.cpp's default micro-batch
# MLA's cache in llama.cpp since ggml-org/llama.cpp#12801: one latent per token and layer (n_head_kv 1), K of
# kv_lora_rank + qk_rope_head_dim and V of kv_lora_rank elements (convert_hf_to_gguf.py DeepseekV2Model)
MLA_CACHE_SOURCE = "llama.cpp convert_hf_to_gguf.py DeepseekV2Model (key_length, value_length) after PR #12801"


@dataclass(frozen=True)
class GgufShape:
    params: int  # every weight, token embedding included
    embedding_params: int
    gpu_weight_bytes: int  # the file's tensors less the token embedding
    bpw: float
    expert_bytes: int = 0  # of gpu_weight_bytes, the routed experts' tensors (ffn_*_exps) of all layers
    active_share: float = 1.0  # the share of the routed experts one token reads


def parameters(d: ModelDims) -> tuple[int, int]:
    """(all parameters, token-embedding parameters) of a model of this shape."""
    n = parameter_count(d)
    return n.total, n.embedding


def header_shape(d: ModelDims) -> HeaderShape:
    if d.is_mla:
        return HeaderShape("deepseek2", d.layers, d.hidden, d.intermediate, d.heads, 1,
                           d.kv_lora_rank + d.qk_rope_head_dim, d.kv_lora_rank, d.vocab)
    return HeaderShape("llama", d.layers, d.hidden, d.intermediate, d.heads, d.kv_heads, d.head_dim, d.head_dim, d.vocab)


@lru_cache(maxsize=256)  # a plan asks for the same option's shape for every cache, context and card
def gguf_shape(d: ModelDims, file_bytes: int | None, bpw: float | None, gguf_type: str | None = None) -> GgufShape:
    """The weights of a GGUF of this shape: llama-quantize's mix for its type when known, else its file size,
    else its type's bits per weight."""
    params, emb = parameters(d)
    share = d.experts_active / d.experts if d.is_moe else 1.0
    if gguf_type and gguf_type.upper() in MIX_TYPES and (d.is_moe or d.is_mla):
        m = gguf_mix(d, gguf_type)  # experts and attention get different types: llama-quantize's rules
        gpu = sum(x.alloc for x in m.layers) + m.output_alloc
        return GgufShape(params, emb, gpu, (file_bytes or m.total_bytes) * 8 / params,
                         sum(x.expert_alloc for x in m.layers), share)
    if gguf_type and gguf_type.upper() in g27.MIXES:
        w = g27.quant_weights(header_shape(d), gguf_type)
        gpu = sum(w.layer_alloc_bytes) + w.output_alloc_bytes + w.other_bytes
        return GgufShape(params, emb, gpu, (file_bytes or w.total_bytes) * 8 / params)
    if file_bytes:
        bpw = file_bytes * 8 / params
    if not bpw:
        raise ValueError("neither the file size nor the bits per weight is known")
    total = file_bytes or int(params * bpw / 8)
    experts = int(parameter_count(d).expert * bpw / 8) if d.is_moe else 0  # the experts' share at the file's bpw
    return GgufShape(params, emb, int(total - emb * bpw / 8), bpw, experts, share)


def kv_bytes(d: ModelDims, n_ctx: int, cache: str) -> int:
    return g27.kv_cache_bytes(header_shape(d), n_ctx, cache, cache)


def kv_read_bytes(d: ModelDims, past: int, cache: str) -> int:
    """What one decode step reads of the cache with `past` tokens in it: K and V once, in the cache's own type."""
    return g27.kv_read_bytes(header_shape(d), past, cache, cache)


def compute_bytes(d: ModelDims, n_ctx: int, cache: str = "f16") -> int:
    """The compute buffer llama.cpp reserves on the GPU with flash attention on (quantized K/V need it)."""
    return g27.compute_buffer_bytes(header_shape(d), n_ctx, N_UBATCH, flash_attn=True,
                                    kv_quantized=g27.kv_quantized(cache, cache))[0]


def split_layers(n_layers: int, capacities: list[float]) -> list[int]:
    """llama.cpp's default --tensor-split: layers in proportion to each GPU's memory."""
    total = sum(capacities)
    cuts = [round(n_layers * sum(capacities[: i + 1]) / total) for i in range(len(capacities))]
    return [b - a for a, b in zip([0, *cuts[:-1]], cuts)]


def expert_layer_bytes(d: ModelDims, shape: GgufShape) -> float:
    """One routed layer's experts: what each step of --n-cpu-moe moves to host RAM."""
    return shape.expert_bytes / d.moe_layers if d.is_moe and d.moe_layers else 0.0


def gpu_peaks(d: ModelDims, shape: GgufShape, n_ctx: int, cache: str, capacities: list[float],
              context_bytes: int, cpu_expert_layers: int = 0) -> list[int]:
    """Peak bytes per GPU: its layers' weights and cache, the compute buffer and the CUDA context on each, and the
    output layer on the last GPU. `cpu_expert_layers`: the routed experts of that many layers stay in host RAM
    (llama.cpp --n-cpu-moe; they come off the first GPU, which holds the first layers)."""
    layers = split_layers(d.layers, capacities)
    head = d.vocab * d.hidden * shape.bpw / 8 if not d.tied else 0
    per_layer = (shape.gpu_weight_bytes - head) / d.layers
    kv_layer = kv_bytes(d, n_ctx, cache) / d.layers
    peaks = []
    for i, n in enumerate(layers):
        peak = n * (per_layer + kv_layer) + compute_bytes(d, n_ctx, cache) + context_bytes
        if i == 0:
            peak -= min(cpu_expert_layers, d.moe_layers) * expert_layer_bytes(d, shape)
        peaks.append(int(peak + (head if i == len(layers) - 1 else 0)))
    return peaks


def _read_per_layer(d: ModelDims, shape: GgufShape, head: float) -> float:
    """What a token reads of one layer's weights on average: all but the routed experts it does not use."""
    unread = shape.expert_bytes * (1 - shape.active_share)
    return (shape.gpu_weight_bytes - head - unread) / d.layers


def gpu_read_shares(d: ModelDims, shape: GgufShape, past: int, cache: str, capacities: list[float],
                    cpu_expert_layers: int = 0) -> list[int]:
    """Bytes each GPU reads per decoded token (its layers' weights, of a MoE the active experts, and cache; the head
    on the last). The active experts of `cpu_expert_layers` layers are read in host RAM instead (host_read_bytes)."""
    layers = split_layers(d.layers, capacities)
    head = d.vocab * d.hidden * shape.bpw / 8 if not d.tied else 0
    per_layer = _read_per_layer(d, shape, head) + kv_read_bytes(d, past, cache) / d.layers
    shares = [n * per_layer + (head if i == len(layers) - 1 else 0) for i, n in enumerate(layers)]
    shares[0] -= host_read_bytes(d, shape, cpu_expert_layers)
    return [int(x) for x in shares]


def host_read_bytes(d: ModelDims, shape: GgufShape, cpu_expert_layers: int) -> int:
    """What a decoded token reads of the experts kept in host RAM: the active ones of those layers."""
    return int(min(cpu_expert_layers, d.moe_layers) * expert_layer_bytes(d, shape) * shape.active_share)
