"""llama.cpp's VRAM for a GGUF option planned from the model's shape, before any file is read.

KV cache and compute buffer: issue 27's formulas (doctor/knowledge/arithmetic/gguf_budget.py, fitted on llama.cpp's own
printed sizes). Weights: llama-quantize's mix for the file type (gguf_budget.quant_weights: the GPU tensors as
ggml-cuda allocates them; the token embedding stays on the host) where the mix is known, else the file's size less
the embedding. The CUDA context: llama.cpp's own allowance (doctor/knowledge/cuda_context.py).
A split is llama.cpp's default --tensor-split: layers in proportion to each GPU's memory.
"""

from __future__ import annotations

from dataclasses import dataclass

from doctor.knowledge.arithmetic import gguf_budget as g27
from doctor.knowledge.arithmetic.model_bytes import ModelDims, layer_linears
from doctor.model.gguf import GgufShape as HeaderShape

N_UBATCH = 512  # llama.cpp's default micro-batch

@dataclass(frozen=True)
class GgufShape:
    params: int  # every weight, token embedding included
    embedding_params: int
    gpu_weight_bytes: int  # the file's tensors less the token embedding
    bpw: float


def parameters(d: ModelDims) -> tuple[int, int]:
    """(all parameters, token-embedding parameters) of a Llama-style model of this shape."""
    layer = sum(i * o for _, i, o in layer_linears(d.hidden, d.intermediate, d.heads, d.kv_heads, d.head_dim, d.experts))
    emb = d.vocab * d.hidden
    return d.layers * (layer + 2 * d.hidden) + emb + (0 if d.tied else emb) + d.hidden, emb


def header_shape(d: ModelDims) -> HeaderShape:
    return HeaderShape("llama", d.layers, d.hidden, d.intermediate, d.heads, d.kv_heads, d.head_dim, d.head_dim, d.vocab)


def gguf_shape(d: ModelDims, file_bytes: int | None, bpw: float | None, gguf_type: str | None = None) -> GgufShape:
    """The weights of a GGUF of this shape: llama-quantize's mix for its type when known, else its file size,
    else its type's bits per weight."""
    params, emb = parameters(d)
    if gguf_type and gguf_type.upper() in g27.MIXES:
        w = g27.quant_weights(header_shape(d), gguf_type)
        gpu = sum(w.layer_alloc_bytes) + w.output_alloc_bytes + w.other_bytes
        return GgufShape(params, emb, gpu, (file_bytes or w.total_bytes) * 8 / params)
    if file_bytes:
        bpw = file_bytes * 8 / params
    if not bpw:
        raise ValueError("neither the file size nor the bits per weight is known")
    total = file_bytes or int(params * bpw / 8)
    return GgufShape(params, emb, int(total - emb * bpw / 8), bpw)


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


def gpu_peaks(d: ModelDims, shape: GgufShape, n_ctx: int, cache: str, capacities: list[float],
              context_bytes: int) -> list[int]:
    """Peak bytes per GPU: its layers' weights and cache, the compute buffer and the CUDA context on each, and the
    output layer on the last GPU."""
    layers = split_layers(d.layers, capacities)
    head = d.vocab * d.hidden * shape.bpw / 8 if not d.tied else 0
    per_layer = (shape.gpu_weight_bytes - head) / d.layers
    kv_layer = kv_bytes(d, n_ctx, cache) / d.layers
    peaks = []
    for i, n in enumerate(layers):
        peak = n * (per_layer + kv_layer) + compute_bytes(d, n_ctx, cache) + context_bytes
        peaks.append(int(peak + (head if i == len(layers) - 1 else 0)))
    return peaks


def gpu_read_shares(d: ModelDims, shape: GgufShape, past: int, cache: str, capacities: list[float]) -> list[int]:
    """Bytes each GPU reads per decoded token (its layers' weights and cache; the head on the last)."""
    layers = split_layers(d.layers, capacities)
    head = d.vocab * d.hidden * shape.bpw / 8 if not d.tied else 0
    per_layer = (shape.gpu_weight_bytes - head) / d.layers + kv_read_bytes(d, past, cache) / d.layers
    return [int(n * per_layer + (head if i == len(layers) - 1 else 0)) for i, n in enumerate(layers)]
