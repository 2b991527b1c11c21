"""The tensors llama-quantize writes for a model's shape, with the type each one gets: dense, MoE or latent attention.

A GGUF "Q4_K_M" is a mix: llama-quantize picks each tensor's type from its role, its layer and the model
(llama.cpp src/llama-quant.cpp, llama_tensor_get_type_impl and tensor_type_fallback, read at commit 007dbbf3,
https://github.com/ggml-org/llama.cpp/blob/master/src/llama-quant.cpp). What this models of it:

- the output (and a tied token embedding) at Q6_K (Q8_0 for a Q8_0 file); the token embedding at the base type;
- attn_v (and MLA's attn_kv_b): Q3_K_M's first two at Q5_K, then Q4_K; Q4_K_M's and Q5_K_M's use_more_bits layers
  at Q6_K; Q4_K_S's first four at Q5_K; every one at Q8_0 when the model has exactly 8 experts (Mixtral);
- attn_k at Q8_0 with 8 experts; attn_output at Q5_K with 8 experts for Q3_K_M, Q4_K_S and Q4_K_M (Q4_K for a
  dense Q3_K_M);
- ffn_down (dense, shared and routed experts alike; with experts the layer comes from the tensor's name):
  Q3_K_M's first n/16 layers at Q5_K, the others at Q4_K; Q4_K_M's and Q5_K_M's use_more_bits layers at Q6_K;
  Q4_K_S's first n/8 at Q5_K;
- a row whose length is not a multiple of the type's block falls back (Q4_K to Q5_0, Q5_K to Q5_1, Q6_K to Q8_0,
  Q3_K to Q4_0; F16 when even that does not divide): DeepSeek-V2-Lite's and Qwen1.5-MoE's 1408-wide experts;
- MXFP4_MOE (gpt-oss's published GGUFs): the routed experts at MXFP4, every other matrix and the output at Q8_0;
- the router (ffn_gate_inp) and the norms stay F32 (convert_hf_to_gguf.py writes the router as F32, and
  llama-quantize leaves 1-D tensors and ffn_gate_inp alone).

Not modelled: an importance matrix's choices (they touch only the IQ and Q2 types), the 70B-type attn_v bump,
biases and per-architecture extras (a few MB). A real file's header always wins over this.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from doctor.knowledge.arithmetic.model_shape import Linear, ModelDims, layer_parts
from doctor.model.ggml import ggml_type

MATRIX_ROW_PADDING = 512  # ggml-cuda pads a quantized tensor's allocation by up to one row of 512 elements
CUDA_ALIGN = 128
SOURCE = ("llama.cpp src/llama-quant.cpp llama_tensor_get_type_impl and tensor_type_fallback "
          "(https://github.com/ggml-org/llama.cpp/blob/master/src/llama-quant.cpp, read at 007dbbf3)")

BASE = {"Q3_K_M": "Q3_K", "Q4_K_S": "Q4_K", "Q4_K_M": "Q4_K", "Q5_K_S": "Q5_K", "Q5_K_M": "Q5_K", "Q6_K": "Q6_K",
        "Q8_0": "Q8_0", "Q4_0": "Q4_0", "F16": "F16", "MXFP4_MOE": "Q8_0"}
FALLBACK = {"Q4_K": "Q5_0", "Q5_K": "Q5_1", "Q6_K": "Q8_0", "Q3_K": "Q4_0", "Q2_K": "Q4_0"}


@dataclass(frozen=True)
class MixLayer:
    bytes: int  # every tensor of the layer
    alloc: int  # as ggml-cuda allocates it on a GPU
    expert_bytes: int  # of which the routed experts' (ffn_*_exps): what --n-cpu-moe / -ot exps=CPU moves to host RAM
    expert_alloc: int


@dataclass(frozen=True)
class GgufMix:
    file_type: str
    layers: tuple[MixLayer, ...]
    embedding_bytes: int  # token_embd: stays in host memory under llama.cpp
    output_bytes: int  # output.weight + output_norm
    output_alloc: int
    bytes_by_type: dict[str, int] = field(default_factory=dict)

    @property
    def total_bytes(self) -> int:
        return sum(x.bytes for x in self.layers) + self.embedding_bytes + self.output_bytes

    @property
    def expert_bytes(self) -> int:
        return sum(x.expert_bytes for x in self.layers)


def use_more_bits(i: int, n: int) -> bool:
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def _pad(n: int, to: int) -> int:
    return -(-n // to) * to


def _fallback(type_name: str, ncols: int) -> str:
    t = ggml_type(type_name)
    if ncols % t.block == 0:
        return type_name
    fb = FALLBACK.get(type_name, "F16")
    return fb if ncols % ggml_type(fb).block == 0 else "F16"


def _role(name: str) -> str:
    if name.endswith(("v_proj", "kv_b_proj")):
        return "attn_v"
    if name.endswith("k_proj"):
        return "attn_k"
    if name.endswith("o_proj"):
        return "attn_output"
    if name.endswith("down_proj"):
        return "ffn_down"
    return "other"


def _type(ft: str, role: str, layer: int, d: ModelDims) -> str:
    """llama_tensor_get_type_impl for the roles and file types above (i_attention_wv == the layer: one attn_v each)."""
    base, n, eight = BASE[ft], d.layers, d.experts == 8
    if base == "F16" or ft == "MXFP4_MOE":
        return base
    t = base
    if role == "attn_v":
        if ft == "Q3_K_M":
            t = "Q5_K" if layer < 2 else "Q4_K"
        elif ft in ("Q4_K_M", "Q5_K_M") and use_more_bits(layer, n):
            t = "Q6_K"
        elif ft == "Q4_K_S" and layer < 4:
            t = "Q5_K"
        if eight:
            t = "Q8_0"
    elif role == "attn_k" and eight:
        t = "Q8_0"
    elif role == "ffn_down":
        if ft == "Q3_K_M":
            t = "Q5_K" if layer < n // 16 else "Q4_K"
        elif ft in ("Q4_K_M", "Q5_K_M") and use_more_bits(layer, n):
            t = "Q6_K"
        elif ft == "Q4_K_S" and layer < n // 8:
            t = "Q5_K"
    elif role == "attn_output":
        if eight and ft in ("Q3_K_M", "Q4_K_S", "Q4_K_M"):
            t = "Q5_K"
        elif not eight and ft == "Q3_K_M":
            t = "Q4_K"
    return t


def gguf_mix(d: ModelDims, file_type: str) -> GgufMix:
    """The tensor bytes llama-quantize would write for this shape and file type (see the module's docstring)."""
    ft = file_type.upper()
    if ft not in BASE:
        raise ValueError(f"no mix known for {file_type!r}; one of {', '.join(BASE)}")
    by_type: dict[str, int] = {}

    def tensor(type_name: str, ncols: int, rows: int) -> tuple[int, int]:
        name = _fallback(type_name, ncols)
        gt = ggml_type(name)
        size = gt.row_bytes(ncols) * rows
        pad = gt.row_bytes(MATRIX_ROW_PADDING - ncols % MATRIX_ROW_PADDING) if gt.block > 1 and ncols % MATRIX_ROW_PADDING else 0
        by_type[gt.name] = by_type.get(gt.name, 0) + size
        return size, _pad(size + pad, CUDA_ALIGN)

    def matrices(linears: list[Linear], layer: int, copies: int = 1) -> tuple[int, int]:
        size = alloc = 0
        for name, m_in, m_out in linears:
            s, a = tensor(_type(ft, _role(name), layer, d), m_in, m_out * copies)
            size, alloc = size + s, alloc + a
        return size, alloc

    layers = []
    for i in range(d.layers):
        p = layer_parts(d, i)
        dense_s, dense_a = matrices(p.attention + p.ffn, i)
        if ft == "MXFP4_MOE" and p.experts:
            exp_s = exp_a = 0
            for _, m_in, m_out in p.experts:
                s, a = tensor("MXFP4", m_in, m_out * d.experts)
                exp_s, exp_a = exp_s + s, exp_a + a
        else:
            exp_s, exp_a = matrices(p.experts, i, d.experts) if p.experts else (0, 0)
        small_s, small_a = tensor("F32", p.norms + sum(a * b for _, a, b in p.router), 1)
        layers.append(MixLayer(dense_s + exp_s + small_s, dense_a + exp_a + small_a, exp_s, exp_a))
    tied_out = "Q8_0" if BASE[ft] == "Q8_0" else ("F16" if BASE[ft] == "F16" else "Q6_K")
    embd = tensor(tied_out if d.tied else BASE[ft], d.hidden, d.vocab)[0]
    head = [tensor("F32", d.hidden, 1)] + ([] if d.tied else [tensor(tied_out, d.hidden, d.vocab)])
    return GgufMix(ft, tuple(layers), embd, sum(h[0] for h in head), sum(h[1] for h in head), by_type)
