"""llama.cpp's memory budget and decode ceiling for a GGUF model, from its header alone (pure arithmetic).

What llama.cpp allocates when it loads a model and makes a context, line by line of its log, and how
each is predicted here (llama.cpp as vendored by llama-cpp-python 0.3.36; checked against what it printed on an H200,
benchmarks/results/issue27-llamacpp/):

    load_tensors: CUDA0 model buffer   the GPU layers' tensors as ggml-cuda allocates them (quantized rows
                                       padded to 512 elements, 128-byte alignment) + the output layer when
                                       it is offloaded; token_embd stays in host memory (CPU_Mapped)
    llama_kv_cache: KV buffer          pad(n_ctx, 256) cells x layers x (row(type_k, n_embd_k_gqa) +
                                       row(type_v, n_embd_v_gqa)); a CPU layer's cache stays on the host
    sched_reserve: compute buffer      the worst-case prompt graph of T = min(n_ubatch, n_ctx) tokens: on the GPU
                                       the logits phase or (no flash attention) the KQ scores, f32; the KQ mask
                                       and the input embeddings in CUDA_Host (compute_buffer_bytes)
    output buffer (host)               n_vocab x 4 bytes per sequence

The public API, for `plan` and the checks:

    from doctor.knowledge.arithmetic.gguf_budget import GgufOption, gguf_budget, quant_weights, decode_ceiling
    budget = gguf_budget(shape, weights, GgufOption(n_ctx=8192, cache_type_k="q8_0", flash_attn=True))
    budget.gpu_bytes                               # what the card must hold besides the CUDA context
    decode_ceiling(budget, gpu_bandwidth_gbs=900)  # tok/s, bytes per token over bandwidth
    quant_weights(shape, "Q4_K_M")                 # a GgufWeights for a shape without a file (llama.cpp's mix)
"""

from __future__ import annotations

from dataclasses import dataclass

from doctor.model.ggml import KV_CACHE_TYPES, ggml_type
from doctor.model.gguf import GgufShape, GgufWeights

CTX_PAD = 256  # llama-context.cpp: n_ctx is padded to 256 cells
CUDA_ALIGN = 128
MATRIX_ROW_PADDING = 512
F32 = 4
SOURCE = ("llama.cpp src/llama-model.cpp load_tensors, src/llama-kv-cache.cpp, src/llama-context.cpp sched_reserve, "
          "ggml/src/ggml-cuda/ggml-cuda.cu get_alloc_size (https://github.com/ggml-org/llama.cpp); fitted and checked: "
          "benchmarks/results/issue27-llamacpp/")


@dataclass(frozen=True)
class GgufOption:
    """One way to run a GGUF in llama.cpp: what llama-server's flags set."""

    n_ctx: int  # -c
    cache_type_k: str = "f16"  # -ctk
    cache_type_v: str = "f16"  # -ctv (a quantized V cache needs flash attention)
    flash_attn: bool = True  # -fa on (llama.cpp's own kernels, not the flash-attn package)
    n_gpu_layers: int | None = None  # -ngl; None: every layer and the output (llama.cpp's default today)
    n_ubatch: int = 512  # -ub: the prompt tokens of one graph

    def __post_init__(self) -> None:
        if self.n_ctx < 1:
            raise ValueError("n_ctx must be >= 1")
        if self.n_ubatch < 1:
            raise ValueError("n_ubatch must be >= 1")
        for t in (self.cache_type_k, self.cache_type_v):
            if t.lower() not in KV_CACHE_TYPES:
                raise ValueError(f"unknown K/V cache type {t!r}; llama.cpp accepts {', '.join(KV_CACHE_TYPES)}")


@dataclass(frozen=True)
class GgufBudget:
    """Bytes per buffer for one option; gpu_bytes is what the printed CUDA0 lines add up to."""

    option: GgufOption
    layers_on_gpu: int  # repeating layers on the GPU
    n_layer: int
    output_on_gpu: bool
    model_gpu_bytes: int
    model_host_bytes: int
    kv_cells: int
    kv_gpu_bytes: int
    kv_host_bytes: int
    compute_gpu_bytes: int
    compute_host_bytes: int
    output_host_bytes: int
    read_gpu_bytes: int  # weights a decode step reads on the GPU
    read_host_bytes: int  # weights a decode step reads in host memory (partial offload; one embedding row)

    @property
    def gpu_bytes(self) -> int:
        return self.model_gpu_bytes + self.kv_gpu_bytes + self.compute_gpu_bytes

    @property
    def offloaded_text(self) -> str:
        """As llama.cpp prints it: 'offloaded N/M layers to GPU' (the output layer counts as one)."""
        return f"offloaded {self.layers_on_gpu + int(self.output_on_gpu)}/{self.n_layer + 1} layers to GPU"


def pad(n: int, to: int) -> int:
    return -(-n // to) * to


def kv_cache_bytes(shape: GgufShape, n_ctx: int, cache_type_k: str = "f16", cache_type_v: str = "f16",
                   layers: int | None = None) -> int:
    """The K and V cache of `layers` layers (default all) at n_ctx, padded to 256 cells, as llama.cpp allocates it."""
    n = shape.n_layer if layers is None else layers
    per_cell = ggml_type(cache_type_k).row_bytes(shape.n_embd_k_gqa) + ggml_type(cache_type_v).row_bytes(shape.n_embd_v_gqa)
    return pad(n_ctx, CTX_PAD) * n * per_cell


def kv_quantized(cache_type_k: str, cache_type_v: str) -> bool:
    return any(t.lower() not in ("f16", "bf16", "f32") for t in (cache_type_k, cache_type_v))


def compute_buffer_bytes(shape: GgufShape, n_ctx: int, n_ubatch: int = 512, flash_attn: bool = True,
                         kv_quantized: bool = False) -> tuple[int, int]:
    """(CUDA0, CUDA_Host) compute buffers llama.cpp reserves for the worst-case prompt graph, every layer offloaded.

    T = min(n_ubatch, n_ctx) tokens against n_kv = pad(n_ctx, 256) cells. Fitted on the H200 against the sizes
    llama.cpp printed for 64 x 5120/21760 models: vocab 152064 (benchmarks/results/issue27-llamacpp/: exact to
    0.01 MiB at n_ctx 128, 4096, 8192 and 32768 with flash attention, and at 4096 without) and vocab 8192
    (benchmarks/results/issue28-accuracy/: 161.51-189.51 MiB at n_ctx 4096-32768, where the logits phase is
    small and the feed-forward phase, with the KQ mask's copy on the GPU, is the largest):
      CUDA0, flash attention:  max(T x (n_vocab + n_embd) x 4,                       (the logits phase)
                                   T x (3 n_ff + 3 n_embd) x 4 + n_kv x T x 2)       (feed-forward + the f16 mask)
                               quantized K/V: also n_kv x (n_embd_k + n_embd_v) x 2 + n_kv x T x 2 + 4 x T x n_embd x 4
                                   (the attention phase: the cache converted to f16 for the prompt's flash attention;
                                   200.09 MiB printed at n_ctx 32768 with q8_0)
      CUDA0, without it:       max(the logits phase, n_head x n_kv x T x 4 + T x (5 n_embd + n_embd_kv) x 4)  (the KQ scores)
      CUDA_Host:               the KQ mask (f16 with flash attention, f32 + its f16 copy without) + 2 x T x n_embd x 4
    """
    T = min(n_ubatch, n_ctx)
    n_kv = pad(n_ctx, CTX_PAD)
    out_phase = T * (shape.n_vocab + shape.n_embd) * F32
    ffn_phase = T * (3 * shape.n_ff + 3 * shape.n_embd) * F32 + (n_kv * T * 2 if flash_attn else 0)
    kq_phase = 0 if flash_attn else (shape.n_head * n_kv * T * F32 + T * (5 * shape.n_embd + shape.n_embd_k_gqa) * F32)
    fa_q_phase = (n_kv * (shape.n_embd_k_gqa + shape.n_embd_v_gqa) * 2 + n_kv * T * 2 + 4 * T * shape.n_embd * F32
                  if flash_attn and kv_quantized else 0)
    mask = n_kv * T * (2 if flash_attn else 4 + 2)
    return max(out_phase, ffn_phase, kq_phase, fa_q_phase), mask + 2 * T * shape.n_embd * F32


def gguf_budget(shape: GgufShape, weights: GgufWeights, option: GgufOption) -> GgufBudget:
    """The buffers llama.cpp will allocate for this model and option (one GPU, mmap on, one sequence)."""
    n_layer = shape.n_layer
    if len(weights.layer_bytes) != n_layer:
        raise ValueError(f"the weights have {len(weights.layer_bytes)} layers, the shape {n_layer}")
    ngl = n_layer + 1 if option.n_gpu_layers is None or option.n_gpu_layers < 0 else option.n_gpu_layers
    on_gpu = min(ngl, n_layer)  # llama.cpp offloads the last ngl layers: i >= n_layer + 1 - ngl ...
    output_on_gpu = ngl > n_layer  # ... and the output layer only when ngl exceeds the repeating layers
    first_gpu = n_layer - on_gpu
    model_gpu = sum(weights.layer_alloc_bytes[first_gpu:])
    model_host = weights.embedding_bytes + sum(weights.layer_bytes[:first_gpu])
    read = layer_read_bytes(shape, weights)
    read_gpu = sum(read[first_gpu:])
    read_host = sum(read[:first_gpu])
    head = weights.output_alloc_bytes + pad(weights.other_bytes, CUDA_ALIGN)
    if output_on_gpu:
        model_gpu += head
        read_gpu += weights.output_bytes + weights.other_bytes
    else:
        model_host += weights.output_bytes + weights.other_bytes
        read_host += weights.output_bytes + weights.other_bytes
    embd_row = weights.embedding_bytes // max(shape.n_vocab, 1)
    kv_gpu = kv_cache_bytes(shape, option.n_ctx, option.cache_type_k, option.cache_type_v, on_gpu)
    kv_host = kv_cache_bytes(shape, option.n_ctx, option.cache_type_k, option.cache_type_v, n_layer - on_gpu)
    compute_gpu, compute_host = compute_buffer_bytes(shape, option.n_ctx, option.n_ubatch, option.flash_attn,
                                                     kv_quantized(option.cache_type_k, option.cache_type_v))
    if on_gpu == 0 and not output_on_gpu:
        compute_host, compute_gpu = compute_host + compute_gpu, 0
    return GgufBudget(option=option, layers_on_gpu=on_gpu, n_layer=n_layer, output_on_gpu=output_on_gpu,
                      model_gpu_bytes=model_gpu, model_host_bytes=model_host, kv_cells=pad(option.n_ctx, CTX_PAD),
                      kv_gpu_bytes=kv_gpu, kv_host_bytes=kv_host, compute_gpu_bytes=compute_gpu,
                      compute_host_bytes=compute_host, output_host_bytes=shape.n_vocab * F32,
                      read_gpu_bytes=read_gpu, read_host_bytes=read_host + embd_row)


def layer_read_bytes(shape: GgufShape, weights: GgufWeights) -> tuple[int, ...]:
    """What a decoded token reads of each layer: all of it, less (a MoE) the routed experts it does not use."""
    if not weights.layer_expert_bytes or shape.expert_read_share >= 1.0:
        return weights.layer_bytes
    unread = 1.0 - shape.expert_read_share
    return tuple(int(b - e * unread) for b, e in zip(weights.layer_bytes, weights.layer_expert_bytes))


def kv_read_bytes(shape: GgufShape, position: int, cache_type_k: str = "f16", cache_type_v: str = "f16") -> int:
    """K/V bytes one decode step reads with `position` tokens already in the cache (all layers)."""
    per_tok = ggml_type(cache_type_k).row_bytes(shape.n_embd_k_gqa) + ggml_type(cache_type_v).row_bytes(shape.n_embd_v_gqa)
    return shape.n_layer * position * per_tok


def decode_ceiling(budget: GgufBudget, gpu_bandwidth_gbs: float, host_bandwidth_gbs: float | None = None,
                   position: int = 0, shape: GgufShape | None = None) -> float:
    """Single-stream decode ceiling in tok/s: the time to read each byte once where it lives.

    With layers left in host memory, their bytes are read at host_bandwidth_gbs (required then). `shape`
    and `position` add the K/V cache read at that position (split between GPU and host as the layers are).
    """
    if gpu_bandwidth_gbs <= 0:
        raise ValueError("the GPU's bandwidth must be positive")
    gpu, host = float(budget.read_gpu_bytes), float(budget.read_host_bytes)
    if shape is not None and position > 0:
        kv = kv_read_bytes(shape, position, budget.option.cache_type_k, budget.option.cache_type_v)
        gpu += kv * budget.layers_on_gpu / budget.n_layer
        host += kv * (budget.n_layer - budget.layers_on_gpu) / budget.n_layer
    seconds = gpu / (gpu_bandwidth_gbs * 1e9)
    if budget.layers_on_gpu < budget.n_layer or not budget.output_on_gpu:
        if not host_bandwidth_gbs or host_bandwidth_gbs <= 0:
            raise ValueError("layers run in host memory: give the host's memory bandwidth")
        seconds += host / (host_bandwidth_gbs * 1e9)
    return 1.0 / seconds


# llama.cpp src/llama-quant.cpp llama_tensor_get_type: the mixes of the common file types, for a shape without a file
def use_more_bits(i: int, n: int) -> bool:
    """The layers a *_M mix gives more bits for attn_v and ffn_down."""
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


MIXES: dict[str, tuple[str, str | None, str]] = {  # file type: (base, attn_v/ffn_down on use_more_bits layers, output)
    "Q4_K_M": ("Q4_K", "Q6_K", "Q6_K"),
    "Q5_K_M": ("Q5_K", "Q6_K", "Q6_K"),
    "Q4_K_S": ("Q4_K", None, "Q6_K"),
    "Q4_0": ("Q4_0", None, "Q6_K"),
    "Q6_K": ("Q6_K", None, "Q6_K"),
    "Q8_0": ("Q8_0", None, "Q8_0"),
    "F16": ("F16", None, "F16"),
}


def quant_weights(shape: GgufShape, file_type: str) -> GgufWeights:
    """The tensor bytes llama-quantize would write for a llama/qwen2-style decoder of this shape.

    An estimate for planning before a file exists (biases, rope factors and Q4_K_M's few extra-bit
    choices for small models are left out); a real file's header always wins.
    """
    try:
        base, more, out = MIXES[file_type.upper()]
    except KeyError:
        raise ValueError(f"no mix known for {file_type!r}; one of {', '.join(MIXES)}") from None
    s = shape
    q_out, kv_k, kv_v = s.n_head * s.head_dim_k, s.n_embd_k_gqa, s.n_embd_v_gqa
    by_type: dict[str, int] = {}

    def t(name: str, ne0: int, rows: int) -> tuple[int, int]:
        gt = ggml_type(name)
        size = gt.row_bytes(ne0) * rows
        alloc = size + (gt.row_bytes(MATRIX_ROW_PADDING - ne0 % MATRIX_ROW_PADDING) if gt.block > 1 and ne0 % MATRIX_ROW_PADDING else 0)
        by_type[gt.name] = by_type.get(gt.name, 0) + size
        return size, pad(alloc, CUDA_ALIGN)

    layers, allocs = [], []
    for i in range(s.n_layer):
        hi = more if more and use_more_bits(i, s.n_layer) else base
        parts = [t("F32", s.n_embd, 1), t("F32", s.n_embd, 1), t(base, s.n_embd, q_out), t(base, s.n_embd, kv_k),
                 t(hi, s.n_embd, kv_v), t(base, q_out, s.n_embd), t(base, s.n_embd, s.n_ff), t(base, s.n_embd, s.n_ff),
                 t(hi, s.n_ff, s.n_embd)]
        layers.append(sum(p[0] for p in parts))
        allocs.append(sum(p[1] for p in parts))
    embd = t(base, s.n_embd, s.n_vocab)[0]
    head = [t(out, s.n_embd, s.n_vocab), t("F32", s.n_embd, 1)]
    return GgufWeights(total_bytes=sum(layers) + embd + sum(h[0] for h in head), embedding_bytes=embd,
                       output_bytes=sum(h[0] for h in head), output_alloc_bytes=sum(h[1] for h in head),
                       layer_bytes=tuple(layers), layer_alloc_bytes=tuple(allocs), bytes_by_type=by_type)
