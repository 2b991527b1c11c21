"""llama.cpp's VRAM for a GGUF option planned from the model's shape and the file's size (no header read).

The buffers llama.cpp prints at load, as /work/prep27/gguf_budget.py (issue 27's prep) fitted them on a CPU build
of llama.cpp (vendored in llama-cpp-python 0.3.36; KV exact on 15 contexts, compute within 0.1%):
  model buffer: the GPU tensors, i.e. the file less the token embedding, which llama.cpp keeps on the host;
  KV cache: ceil(n_ctx / 256) x 256 cells x layers x (K + V row sizes of the cache type);
  compute buffer with flash attention: mask (n_kv x T, f16) + T x (n_vocab + n_ff + 2 n_embd) x 4 bytes, T = min(512, n_ctx);
  the CUDA context: the same allowance as ExLlamaV2's budget (checks/knowledge/exllamav2_memory.py).
Issue 27's header-exact budget replaces the file-size estimate of the weights when it lands.
"""

from __future__ import annotations

from dataclasses import dataclass

from checks.arithmetic.model_bytes import ModelDims, layer_linears

CTX_PAD = 256  # llama-context.cpp GGML_PAD(n_ctx, 256)
N_UBATCH = 512  # llama.cpp's default micro-batch
# bytes per element of llama.cpp's cache types (ggml row sizes: q8_0 34 B per 32, q4_0 18 B per 32)
CACHE_TYPE_BYTES = {"f16": 2.0, "q8_0": 34 / 32, "q4_0": 18 / 32}
GGUF_SOURCE = ("llama.cpp buffer formulas fitted on its CPU build (issue 27 prep, /work/prep27/NOTES.md §5); "
               "weights from the file size less the host-side token embedding")


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


def gguf_shape(d: ModelDims, file_bytes: int | None, bpw: float | None) -> GgufShape:
    """The weights of a GGUF of this shape: from its file size when known, else from its type's bits per weight."""
    params, emb = parameters(d)
    if file_bytes:
        bpw = file_bytes * 8 / params
    if not bpw:
        raise ValueError("neither the file size nor the bits per weight is known")
    total = file_bytes or int(params * bpw / 8)
    return GgufShape(params, emb, int(total - emb * bpw / 8), bpw)


def kv_bytes(d: ModelDims, n_ctx: int, cache: str) -> int:
    cells = -(-n_ctx // CTX_PAD) * CTX_PAD
    return int(cells * d.layers * 2 * d.kv_width * CACHE_TYPE_BYTES[cache])


def kv_read_bytes(d: ModelDims, past: int, cache: str) -> int:
    """What one decode step reads of the cache with `past` tokens in it: K and V once, in the cache's own type."""
    return int(past * d.layers * 2 * d.kv_width * CACHE_TYPE_BYTES[cache])


def compute_bytes(d: ModelDims, n_ctx: int) -> int:
    """The compute buffer llama.cpp reserves with flash attention on (quantized K/V need it)."""
    t = min(N_UBATCH, n_ctx)
    n_kv = -(-n_ctx // CTX_PAD) * CTX_PAD
    return n_kv * t * 2 + t * (d.vocab + d.intermediate + 2 * d.hidden) * 4


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
        peak = n * (per_layer + kv_layer) + compute_bytes(d, n_ctx) + context_bytes
        peaks.append(int(peak + (head if i == len(layers) - 1 else 0)))
    return peaks


def gpu_read_shares(d: ModelDims, shape: GgufShape, past: int, cache: str, capacities: list[float]) -> list[int]:
    """Bytes each GPU reads per decoded token (its layers' weights and cache; the head on the last)."""
    layers = split_layers(d.layers, capacities)
    head = d.vocab * d.hidden * shape.bpw / 8 if not d.tied else 0
    per_layer = (shape.gpu_weight_bytes - head) / d.layers + kv_read_bytes(d, past, cache) / d.layers
    return [int(n * per_layer + (head if i == len(layers) - 1 else 0)) for i, n in enumerate(layers)]
