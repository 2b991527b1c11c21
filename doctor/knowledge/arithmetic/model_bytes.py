"""Where a model's bytes live under ExLlamaV2: per decoder layer and LM head on the GPU, embedding in host RAM.

From the safetensors headers when the weights are there; otherwise estimated from config.json and the
declared bits per weight (said so in `source`). Pure arithmetic on ModelFacts: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from doctor.knowledge.arithmetic.model_shape import ArithmeticUnavailable, ModelDims, dims, layer_parts
from doctor.model.model_dir import ModelFacts, WeightFacts
from doctor.model.units import gb
from doctor.model.unknown import known

__all__ = ["ArithmeticUnavailable", "ModelBytes", "ModelDims", "dims", "layer_linears", "matrix_bytes", "model_bytes"]

EXL2_DEFAULT_HEAD_BITS = 6.0  # exllamav2/conversion/convert_exl2.py default -hb 6
BNB_4BIT_BPW = 4.5  # 4-bit codes + one FP32 absmax per 64 weights (no double quantisation)
UNQUANTIZED_BYTES = 2  # ExLlamaV2 holds unquantized weights as FP16, whatever the file's dtype


@dataclass(frozen=True)
class ModelBytes:
    layer_bytes: tuple[int, ...]  # GPU bytes of each decoder layer
    lm_head_bytes: int  # on the GPU (a tied head is loaded again from the embedding, as FP16)
    norm_bytes: int  # final norm and other small GPU tensors
    embedding_bytes: int  # stays in host RAM under ExLlamaV2
    embedding_row_bytes: int  # what one decoded token reads of it
    source: str  # "safetensors headers" | "estimated from config.json at X bpw"
    notes: tuple[str, ...] = ()
    layer_expert_bytes: tuple[int, ...] = ()  # of each layer's bytes, its routed experts' (a MoE; empty: dense)
    active_expert_share: float = 1.0  # the share of the routed experts one token reads (experts_active / experts)

    @property
    def gpu_bytes(self) -> int:
        return sum(self.layer_bytes) + self.lm_head_bytes + self.norm_bytes

    @property
    def read_layer_bytes(self) -> tuple[int, ...]:
        """What one decoded token reads of each layer: all of a dense layer; of a routed one, everything but the
        experts it does not use (memory holds them all; a token's reads are the active ones)."""
        if not self.layer_expert_bytes:
            return self.layer_bytes
        return tuple(int(b - e * (1 - self.active_expert_share)) for b, e in zip(self.layer_bytes, self.layer_expert_bytes))


def layer_linears(hidden: int, intermediate: int, heads: int, kv_heads: int, head_dim: int,
                  experts: int = 1) -> list[tuple[str, int, int]]:
    """(name, in_features, out_features) of every weight matrix in one Llama-style decoder layer: q, k, v, o, then
    gate, up, down per expert. The one description of the layer's shape (the budget, the synthetic models and the
    probe's bits-per-weight all count from it)."""
    q_out, kv_out = heads * head_dim, kv_heads * head_dim
    attn = [("self_attn.q_proj", hidden, q_out), ("self_attn.k_proj", hidden, kv_out),
            ("self_attn.v_proj", hidden, kv_out), ("self_attn.o_proj", q_out, hidden)]
    mlp = [("mlp.gate_proj", hidden, intermediate), ("mlp.up_proj", hidden, intermediate),
           ("mlp.down_proj", intermediate, hidden)] * experts
    return attn + mlp


def _layer_bytes(d: ModelDims, i: int, method: str, bits: float, group: int) -> tuple[float, float]:
    """(all of layer i's bytes, its routed experts' bytes) stored as `method`: the matrices, the router in FP16
    (the converters leave it unquantized) and the norms."""
    p = layer_parts(d, i)
    mats = sum(matrix_bytes(method, m_in, m_out, bits, group) for _, m_in, m_out in p.attention + p.ffn)
    experts = d.experts * sum(matrix_bytes(method, m_in, m_out, bits, group) for _, m_in, m_out in p.experts)
    small = sum(m_in * m_out for _, m_in, m_out in p.router) * UNQUANTIZED_BYTES + p.norms * UNQUANTIZED_BYTES
    return mats + experts + small, experts


def matrix_bytes(method: str, m_in: int, m_out: int, bits: float, group: int, g_idx: bool = True) -> float:
    """Bytes of one m_in x m_out weight matrix stored as `method`. GPTQ/AWQ: packed codes, one FP16 scale and one
    packed zero per group and output column, and (GPTQ, when present) an int32 g_idx per input row."""
    n = m_in * m_out
    if method == "exl2":
        return n * bits / 8  # EXL2's bpw already includes its scales and permutations
    if method in ("gptq", "awq"):
        groups = max(1, m_in // group)
        g_idx_bytes = m_in * 4 if method == "gptq" and g_idx else 0
        return n * bits / 8 + groups * m_out * 2 + groups * m_out * bits / 8 + g_idx_bytes
    if method == "bnb-4bit":
        return n * BNB_4BIT_BPW / 8
    if method == "bnb-8bit":
        return n + m_out * 4
    return n * UNQUANTIZED_BYTES


def _from_config(model: ModelFacts, d: ModelDims) -> ModelBytes:
    q = model.quant
    method = q.method if q else "unknown"
    if method == "gguf":
        raise ArithmeticUnavailable("a GGUF model: ExLlamaV2 cannot load it, so its ExLlamaV2 budget does not apply")
    bits = float(q.bits) if q and known(q.bits) else None
    group = int(q.group_size) if q and known(q.group_size) and q.group_size > 0 else 128
    if method in ("exl2", "gptq", "awq") and bits is None:
        raise ArithmeticUnavailable(f"{method} model without declared bits: cannot estimate its size from config.json")
    if method == "unknown":
        method = "fp16"
    layers = [_layer_bytes(d, i, method, bits or 16, group) for i in range(d.layers)]
    notes = []
    if method == "exl2" and q is not None:
        head_bits = float(q.head_bits) if known(q.head_bits) else EXL2_DEFAULT_HEAD_BITS
        if not known(q.head_bits):
            notes.append(f"head_bits not declared: assumed {EXL2_DEFAULT_HEAD_BITS:g} (the converter's default)")
        head = d.vocab * d.hidden * head_bits / 8
        label = f"{bits:g} bpw, head {head_bits:g} bits"
    else:
        head = d.vocab * d.hidden * UNQUANTIZED_BYTES
        label = f"{bits:g}-bit {method}, FP16 head" if bits else f"{method}, held as FP16"
    share = d.experts_active / d.experts if d.is_moe else 1.0
    if d.is_moe:
        notes.append(f"MoE: all {d.experts} experts of each routed layer are resident; a token reads {d.experts_active}")
    return ModelBytes(tuple(int(b) for b, _ in layers), int(head), d.hidden * 2, d.vocab * d.hidden * 2, d.hidden * 2,
                      f"estimated from config.json at {label}", tuple(notes),
                      tuple(int(e) for _, e in layers) if d.is_moe else (), share)


def _from_headers(w: WeightFacts, d: ModelDims | None) -> ModelBytes:
    emb = w.embedding_bytes if known(w.embedding_bytes) else 0
    emb_width = {"F32": 4, "F16": 2, "BF16": 2}.get(w.embedding_dtype, 2) if known(w.embedding_dtype) else 2
    notes = []
    head = w.lm_head_bytes
    if head == 0 and emb:
        head = emb * UNQUANTIZED_BYTES // emb_width  # tied: ExLlamaV2 loads the embedding again as the FP16 head
        notes.append("lm_head is tied to the embedding: ExLlamaV2 keeps an FP16 copy of it on the GPU")
    layer_bytes = w.layer_bytes
    if w.fp32_bytes:
        share = w.fp32_bytes / max(1, sum(layer_bytes) + w.other_bytes)
        layer_bytes = tuple(int(b * (1 - share / 2)) for b in layer_bytes)
        notes.append("FP32 tensors are halved: ExLlamaV2 casts unquantized weights to FP16")
    if w.vision_bytes:
        notes.append(f"vision tower ({gb(w.vision_bytes, 2)}) not counted: not read when decoding text")
    hidden = w.embedding_shape[-1] if w.embedding_shape else (d.hidden if d else 0)
    row = hidden * emb_width
    experts: tuple[int, ...] = ()
    if d is not None and d.is_moe and len(layer_bytes) == d.layers:
        shares = [_expert_share(d, i) for i in range(d.layers)]
        experts = tuple(int(b * s) for b, s in zip(layer_bytes, shares))
        notes.append(f"MoE: the routed experts' share of each layer's bytes is taken from config.json's shape; "
                     f"a token reads {d.experts_active} of {d.experts}")
    return ModelBytes(layer_bytes, head, w.other_bytes, emb, row, "safetensors headers", tuple(notes), experts,
                      d.experts_active / d.experts if experts and d is not None else 1.0)


def _expert_share(d: ModelDims, i: int) -> float:
    """The routed experts' share of layer i's weights, by parameter count."""
    p = layer_parts(d, i)
    experts = d.experts * sum(a * b for _, a, b in p.experts)
    rest = sum(a * b for _, a, b in p.attention + p.ffn + p.router) + p.norms
    return experts / max(1, experts + rest)


def model_bytes(model: ModelFacts) -> ModelBytes:
    """GPU/host bytes of this model under ExLlamaV2; raises ArithmeticUnavailable when they cannot be known."""
    if model is None or model.problem and model.weights is None and model.config is None:
        raise ArithmeticUnavailable(model.problem if model else "no model facts")
    if model.quant and model.quant.method == "gguf":
        raise ArithmeticUnavailable("a GGUF model: ExLlamaV2 cannot load it, so its ExLlamaV2 budget does not apply")
    w = model.weights
    if w is not None and not w.problems and w.layer_bytes:
        try:
            d = dims(model.config)
        except ArithmeticUnavailable:
            d = None
        return _from_headers(w, d)
    if w is not None and w.problems:
        raise ArithmeticUnavailable(f"the weight files are damaged ({w.problems[0]})")
    return _from_config(model, dims(model.config))
