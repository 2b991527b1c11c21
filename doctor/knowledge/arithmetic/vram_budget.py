"""The VRAM an ExLlamaV2 deployment needs on each GPU, component by component, against free VRAM.

Components (bytes), each from ExLlamaV2 0.3.2's own allocation rules (doctor/knowledge/exllamav2_memory.py):
weights on that GPU, KV cache of its layers at max_seq_len, the FP16 scratch pair a quantized cache adds,
the fixed scratch tensor, RoPE tables, the transient working set (GQA expansion without flash-attn, the
prefill chunk, the logits of the loader's test pass), the loader's reserves, and the CUDA context.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from doctor.knowledge.arithmetic.model_bytes import ModelBytes, ModelDims
from doctor.knowledge.exllamav2_memory import (
    AUTOSPLIT_MINIMUM_RESERVE,
    AUTOSPLIT_RESERVE_GPU0,
    AUTOSPLIT_RESERVE_OTHER,
    CUDA_CONTEXT_MIB,
    MAX_DQ_SIZE,
    MAX_INPUT_LEN,
)
from doctor.knowledge.kv_cache import KV_CACHE_MODES
from doctor.model.units import GIB, MIB

SEQ_STEP = 256  # ExLlamaV2's dynamic generator wants cache lengths in multiples of 256


@dataclass(frozen=True)
class GpuRoom:
    """One GPU as the budget sees it: measured free VRAM, or a planning target's idle capacity."""

    index: int
    name: str
    free_mib: float
    total_mib: float
    measured: bool = True


@dataclass(frozen=True)
class DeviceBudget:
    index: int
    layers: int
    components: dict[str, int]  # bytes
    peak_bytes: int
    free_bytes: int
    read_weight_bytes: int = 0  # what one decoded token reads of this GPU's weights (a MoE reads its active experts)

    @property
    def margin_bytes(self) -> int:
        return self.free_bytes - self.peak_bytes


@dataclass(frozen=True)
class Budget:
    devices: tuple[DeviceBudget, ...]
    max_seq_len: int
    cache_mode: str
    loader: str  # "load_autosplit" | "load(gpu_split)"
    unplaced_layers: int = 0
    host_bytes: int = 0  # the embedding, in system RAM
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def fits(self) -> bool:
        return self.unplaced_layers == 0 and all(d.margin_bytes >= 0 for d in self.devices)

    @property
    def margin_bytes(self) -> int:
        return min(d.margin_bytes for d in self.devices) if self.devices else 0


def _pad32(n: int) -> int:
    return n + (-n % 32)


def fixed_scratch_bytes(d: ModelDims, chunk: int) -> int:
    """The device context's scratch tensor: the largest scratch_space_fixed() of any module."""
    dq = MAX_DQ_SIZE[0]
    q_out, kv_out = d.heads * d.head_dim, d.kv_heads * d.head_dim
    attn = (chunk * max(q_out, d.hidden) * 2 + 128) + 2 * min(max(d.hidden * q_out, d.hidden * kv_out, q_out * d.hidden), dq)
    wide = max(d.hidden, d.intermediate)
    mlp = (chunk * d.hidden * 2 + 128) + 2 * (chunk * wide * 2 + 128) + 2 * min(d.hidden * d.intermediate, dq)
    head = 2 * min(d.hidden * _pad32(d.vocab), dq)
    return max(attn, mlp, head)


def rope_bytes(d: ModelDims, max_seq_len: int, bases: int = 1) -> int:
    return 2 * max_seq_len * d.head_dim * 2 * bases  # sin + cos, FP16


def runtime_transient_bytes(d: ModelDims, max_seq_len: int, chunk: int, quantized: bool) -> int:
    """Short-lived tensors at the worst prefill/decode step, without flash-attn.

    Without flash-attn, model.forward shrinks prefill chunks so (past + chunk) x chunk <= max_attention_size
    (2048^2), so the worst step is either the first full chunk or the last, small one on a full cache, where
    repeat_kv expands the whole past's K and V to every attention head.
    """
    def at(past: int, rows: int) -> int:
        q_out = d.heads * d.head_dim
        gqa = 2 * d.heads * d.head_dim * (past + rows) * 2 if d.kv_heads < d.heads else 0
        states = rows * (q_out * 2 + 2 * d.kv_heads * d.head_dim) * 2  # q, attention output, k, v of the chunk
        mlp = 0 if quantized else 3 * rows * d.intermediate * 2  # torch path: gate, up and act results
        return gqa + states + mlp

    last_rows = max(1, min(chunk, MAX_INPUT_LEN[0] ** 2 // max(1, max_seq_len)))
    return max(at(0, chunk), at(max_seq_len - last_rows, last_rows))


def load_transient_bytes(d: ModelDims, chunk: int) -> int:
    """load_autosplit forwards a max_input_len test batch through the head: logits of `chunk` rows, FP16."""
    return chunk * _pad32(d.vocab) * 2


def _placement(mb: ModelBytes, capacity: list[float], per_layer_extra: int, head: int) -> tuple[list[list[int]], int, int]:
    """Greedy, in module order, like ExLlamaV2's loaders: fill a GPU, then move to the next; the head comes last.

    Returns (layer indices per GPU, layers that fit nowhere, the head's GPU). What fits nowhere is counted on
    the last GPU, so its shortfall shows in the margin.
    """
    n_dev = len(capacity)
    placed: list[list[int]] = [[] for _ in range(n_dev)]
    dev, left = 0, list(capacity)
    for i, size in enumerate(mb.layer_bytes):
        need = size + per_layer_extra
        while dev < n_dev and need > left[dev]:
            dev += 1
        if dev >= n_dev:
            placed[-1].extend(range(i, len(mb.layer_bytes)))
            return placed, len(mb.layer_bytes) - i, n_dev - 1
        placed[dev].append(i)
        left[dev] -= need
    while dev < n_dev - 1 and head > left[dev]:
        dev += 1
    return placed, 0, dev


def plan_budget(mb: ModelBytes, d: ModelDims, rooms: list[GpuRoom], max_seq_len: int, cache_mode: str = "fp16",
                gpu_split: tuple[float, ...] | None = None, quantized: bool = True,
                context_bytes: int | None = None, rope_bases: int = 1) -> Budget:
    """Peak VRAM per GPU for this model, cache and context; `gpu_split` (GB) means model.load(gpu_split)."""
    mode = KV_CACHE_MODES[cache_mode]
    ctx = CUDA_CONTEXT_MIB[0] * MIB if context_bytes is None else context_bytes
    autosplit = gpu_split is None
    chunk = min(MAX_INPUT_LEN[0], max_seq_len) if autosplit else MAX_INPUT_LEN[0]
    n_dev = len(gpu_split) if gpu_split else len(rooms)
    rooms = (list(rooms) + [rooms[-1]] * n_dev)[:n_dev] if rooms else []
    cache_layer = mode.bytes_per_token_layer(d.kv_heads, d.head_dim) * max_seq_len
    # quantized layers take their scratch slices at load; an unquantized model never allocates it
    # (its first get_device_context call passes scratch=False: attn.py forward_torch)
    scratch = fixed_scratch_bytes(d, chunk) if quantized else 0
    pair = 2 * 2 * d.kv_width * max_seq_len if mode.fp16_scratch_pair else 0
    rope = rope_bytes(d, max_seq_len, rope_bases)
    transient = runtime_transient_bytes(d, max_seq_len, chunk, quantized)
    head_extra = mb.lm_head_bytes + mb.norm_bytes
    if gpu_split is None:  # autosplit
        def reserve(i: int, last: bool) -> int:
            own = AUTOSPLIT_RESERVE_GPU0[0] if i == 0 else AUTOSPLIT_RESERVE_OTHER[0]
            return own + AUTOSPLIT_MINIMUM_RESERVE[0] + (load_transient_bytes(d, chunk) if last else 0)

        capacity = [r.free_mib * MIB - (ctx + scratch + rope + pair + max(transient, reserve(i, i == n_dev - 1)))
                    for i, r in enumerate(rooms)]
        placed, unplaced, head_dev = _placement(mb, capacity, cache_layer, head_extra)
    else:
        state = MAX_INPUT_LEN[0] * d.hidden * 2 + MAX_INPUT_LEN[0] ** 2 * 2  # hidden state + mask, per set_device_map
        capacity = [g * GIB - rope - state - scratch for g in gpu_split]
        placed, unplaced, head_dev = _placement(mb, capacity, 0, head_extra)
    devices = []
    reads = mb.read_layer_bytes  # (a property that builds the tuple: once, not once per layer)
    for i in range(n_dev):
        layers = placed[i]
        used = bool(layers) or i == head_dev
        comp = {
            "weights": sum(mb.layer_bytes[j] for j in layers) + (head_extra if i == head_dev else 0),
            "kv_cache": cache_layer * len(layers),
            "cache_fp16_scratch": pair if layers else 0,
            "fixed_scratch": scratch if used else 0,
            "rope_tables": rope if used else 0,
            "cuda_context": ctx if used else 0,
        }
        runtime = transient if layers else 0
        loading = 0
        if autosplit and used:
            loading = (AUTOSPLIT_RESERVE_GPU0[0] if i == 0 else AUTOSPLIT_RESERVE_OTHER[0]) + AUTOSPLIT_MINIMUM_RESERVE[0]
            loading += load_transient_bytes(d, chunk) if i == head_dev else 0
        comp["transient"] = max(runtime, loading)
        comp["transient_is"] = 1 if loading > runtime else 0  # 1: the loader's moment is the peak
        peak = sum(v for k, v in comp.items() if k != "transient_is")
        free = int(rooms[i].free_mib * MIB) if i < len(rooms) else 0
        read = sum(reads[j] for j in layers) + (head_extra if i == head_dev else 0)
        devices.append(DeviceBudget(i, len(layers), comp, peak, free, read))
    notes: tuple[str, ...] = ()
    if gpu_split and len(gpu_split) > len(rooms):
        notes = (f"--gpu-split names {len(gpu_split)} GPUs; the budget assumes each like GPU {rooms[-1].index if rooms else 0}",)
    return Budget(tuple(devices), max_seq_len, cache_mode, "load_autosplit" if autosplit else "load(gpu_split)",
                  unplaced, mb.embedding_bytes, notes)


def largest_fitting_seq_len(mb: ModelBytes, d: ModelDims, rooms: list[GpuRoom], cache_mode: str,
                            gpu_split: tuple[float, ...] | None = None, quantized: bool = True,
                            upper: int = 131072, context_bytes: int | None = None) -> int:
    """The longest max_seq_len (a multiple of 256) that fits, or 0 when not even 256 tokens do."""
    def fits(n: int) -> bool:
        return plan_budget(mb, d, rooms, n, cache_mode, gpu_split, quantized, context_bytes).fits

    lo, hi = 0, max(1, upper // SEQ_STEP)
    if not fits(SEQ_STEP):
        return 0
    lo = 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid * SEQ_STEP):
            lo = mid
        else:
            hi = mid - 1
    return lo * SEQ_STEP
