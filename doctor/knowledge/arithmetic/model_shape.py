"""A decoder's shape as the memory and speed arithmetic needs it: dense, mixture-of-experts or latent attention.

One description of every weight matrix in a layer, by role, so that memory counts all of them and a decoded
token's reads count only the ones it uses:

- attention: q, k, v, o (grouped-query) or DeepSeek's multi-head latent attention (q or q_a/q_b, kv_a, kv_b, o);
- a dense FFN (gate, up, down at intermediate_size) on the layers that do not route;
- on the routed (MoE) layers: every routed expert (gate, up, down at moe_intermediate_size), the shared experts
  that every token uses, and the router (hidden x experts).

A token reads the attention, the dense FFN or the shared experts, the router and `experts_active` of the routed
experts; memory holds them all. Shapes follow transformers' modeling code for each family (Qwen2/3-MoE, Mixtral,
DeepSeek-V2/V3, gpt-oss, OLMoE, Granite-MoE).
"""

from __future__ import annotations

from dataclasses import dataclass

from doctor.model.model_dir import ModelConfig
from doctor.model.unknown import known

Linear = tuple[str, int, int]  # (name, in_features, out_features)


class ArithmeticUnavailable(ValueError):
    """The model's sizes cannot be worked out; the message says which fact is missing."""


@dataclass(frozen=True)
class ModelDims:
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int  # the dense FFN's width (the routed layers use expert_intermediate)
    vocab: int
    tied: bool
    experts: int = 1  # routed experts per MoE layer; 1: a dense model
    experts_active: int = 1  # routed experts a token uses
    expert_intermediate: int = 0  # one routed expert's FFN width
    shared_intermediate: int = 0  # every shared expert's FFN width together
    moe_layers: int = 0  # layers that route; the first layers - moe_layers are dense (DeepSeek's first_k_dense_replace)
    kv_lora_rank: int = 0  # > 0: multi-head latent attention
    q_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    qk_nope_head_dim: int = 0
    v_head_dim: int = 0

    @property
    def kv_width(self) -> int:
        return self.kv_heads * self.head_dim

    @property
    def is_moe(self) -> bool:
        return self.experts > 1 and self.moe_layers > 0

    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank > 0

    @property
    def dense_layers(self) -> int:
        return self.layers - (self.moe_layers if self.is_moe else 0)

    def layer_is_moe(self, i: int) -> bool:
        """Dense layers first (DeepSeek's first_k_dense_replace; other families route on every layer they route)."""
        return self.is_moe and i >= self.dense_layers


def _given(v: object, default: int = 0) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else default


def dims(config: ModelConfig | None) -> ModelDims:
    if config is None:
        raise ArithmeticUnavailable("no usable config.json, so the model's shape is unknown")
    need = {"num_hidden_layers": config.num_hidden_layers, "hidden_size": config.hidden_size,
            "num_attention_heads": config.num_attention_heads, "num_key_value_heads": config.num_key_value_heads,
            "head_dim": config.head_dim, "intermediate_size": config.intermediate_size, "vocab_size": config.vocab_size}
    missing = [k for k, v in need.items() if not known(v)]
    if missing:
        raise ArithmeticUnavailable(f"config.json lacks {', '.join(missing)}")
    layers, hidden, heads, kv_heads, head_dim, intermediate, vocab = [v for v in need.values() if known(v)]
    tied = bool(config.tie_word_embeddings) if known(config.tie_word_embeddings) else False
    experts = _given(config.num_experts, 1) or 1
    mla = dict(kv_lora_rank=_given(config.kv_lora_rank), q_lora_rank=_given(config.q_lora_rank),
               qk_rope_head_dim=_given(config.qk_rope_head_dim), qk_nope_head_dim=_given(config.qk_nope_head_dim),
               v_head_dim=_given(config.v_head_dim))
    if mla["kv_lora_rank"] and not (mla["qk_rope_head_dim"] and mla["v_head_dim"]):
        raise ArithmeticUnavailable("config.json has kv_lora_rank but lacks qk_rope_head_dim or v_head_dim")
    if experts <= 1:
        return ModelDims(layers, hidden, heads, kv_heads, head_dim, intermediate, vocab, tied, **mla)
    moe = {"num_experts_per_tok": config.num_experts_per_tok, "moe_intermediate_size": config.moe_intermediate_size,
           "moe_layers": config.moe_layers}
    lacking = [k for k, v in moe.items() if not known(v)]
    if lacking:
        raise ArithmeticUnavailable(f"a mixture-of-experts config.json that lacks {', '.join(lacking)}")
    shared = _given(config.shared_expert_intermediate_size)
    return ModelDims(layers, hidden, heads, kv_heads, head_dim, intermediate, vocab, tied, experts,
                     min(experts, _given(config.num_experts_per_tok, 1) or 1), _given(config.moe_intermediate_size),
                     shared, min(layers, _given(config.moe_layers)), **mla)


def ffn_linears(hidden: int, width: int, prefix: str = "mlp") -> list[Linear]:
    return [(f"{prefix}.gate_proj", hidden, width), (f"{prefix}.up_proj", hidden, width),
            (f"{prefix}.down_proj", width, hidden)]


def attention_linears(d: ModelDims) -> list[Linear]:
    """Grouped-query attention's q, k, v, o; or multi-head latent attention's projections (DeepSeek-V2/V3)."""
    if not d.is_mla:
        q_out, kv_out = d.heads * d.head_dim, d.kv_heads * d.head_dim
        return [("self_attn.q_proj", d.hidden, q_out), ("self_attn.k_proj", d.hidden, kv_out),
                ("self_attn.v_proj", d.hidden, kv_out), ("self_attn.o_proj", q_out, d.hidden)]
    qk = d.qk_nope_head_dim + d.qk_rope_head_dim
    q = ([("self_attn.q_a_proj", d.hidden, d.q_lora_rank), ("self_attn.q_b_proj", d.q_lora_rank, d.heads * qk)]
         if d.q_lora_rank else [("self_attn.q_proj", d.hidden, d.heads * qk)])
    return q + [("self_attn.kv_a_proj_with_mqa", d.hidden, d.kv_lora_rank + d.qk_rope_head_dim),
                ("self_attn.kv_b_proj", d.kv_lora_rank, d.heads * (d.qk_nope_head_dim + d.v_head_dim)),
                ("self_attn.o_proj", d.heads * d.v_head_dim, d.hidden)]


@dataclass(frozen=True)
class LayerParts:
    """One decoder layer's matrices by role. `experts` holds ONE routed expert's; the layer has d.experts of them."""

    attention: list[Linear]
    ffn: list[Linear]  # the dense FFN, or the shared experts on a routed layer
    experts: list[Linear]
    router: list[Linear]
    norms: int  # elements of the layer's norm vectors


def layer_parts(d: ModelDims, i: int) -> LayerParts:
    norms = 2 * d.hidden + (d.kv_lora_rank + d.q_lora_rank if d.is_mla else 0)
    if not d.layer_is_moe(i):
        return LayerParts(attention_linears(d), ffn_linears(d.hidden, d.intermediate), [], [], norms)
    shared = ffn_linears(d.hidden, d.shared_intermediate, "mlp.shared_expert") if d.shared_intermediate else []
    return LayerParts(attention_linears(d), shared, ffn_linears(d.hidden, d.expert_intermediate, "mlp.experts.N"),
                      [("mlp.gate", d.hidden, d.experts)], norms)


@dataclass(frozen=True)
class ParameterCount:
    total: int  # every weight, both embeddings included (tied: once)
    active: int  # what one token uses: attention, dense FFN or shared experts, router, the active experts, and both
    # embeddings (the convention of Qwen's and Mistral's model cards)
    embedding: int  # the input embedding table (a token reads one row of it)
    expert: int  # all routed experts' weights

    @property
    def active_without_embedding(self) -> int:
        """The active count without the input embedding table (OpenAI's and DeepSeek's convention for gpt-oss and
        DeepSeek-V2; also what a decoded token reads of the weights, less one embedding row)."""
        return self.active - self.embedding


def _n(linears: list[Linear]) -> int:
    return sum(i * o for _, i, o in linears)


def parameter_count(d: ModelDims) -> ParameterCount:
    total = active = expert = 0
    for i in range(d.layers):
        p = layer_parts(d, i)
        common = _n(p.attention) + _n(p.ffn) + _n(p.router) + p.norms
        total += common + d.experts * _n(p.experts)
        active += common + d.experts_active * _n(p.experts)
        expert += d.experts * _n(p.experts)
    emb = d.vocab * d.hidden
    head = 0 if d.tied else emb
    return ParameterCount(total + emb + head + d.hidden, active + emb + head + d.hidden, emb, expert)


def shape_text(d: ModelDims) -> str:
    """'48 layers, hidden 2048, 128 experts of FFN 768 (8 active), 32/4 heads x 128, vocab 151936' and the like."""
    if d.is_moe:
        ffn = f"{d.experts} experts of FFN {d.expert_intermediate} ({d.experts_active} active)"
        if d.shared_intermediate:
            ffn += f" + shared FFN {d.shared_intermediate}"
        if d.dense_layers:
            ffn += f", {d.dense_layers} dense layer{'s' if d.dense_layers > 1 else ''} of FFN {d.intermediate}"
    else:
        ffn = f"FFN {d.intermediate}"
    attn = (f"{d.heads} heads, latent KV {d.kv_lora_rank} + rope {d.qk_rope_head_dim}" if d.is_mla else
            f"{d.heads}/{d.kv_heads} heads x {d.head_dim}")
    text = f"{d.layers} layers, hidden {d.hidden}, {ffn}, {attn}, vocab {d.vocab}"
    if d.is_moe:
        n = parameter_count(d)
        text += f"; {n.total / 1e9:.1f}B parameters, {n.active / 1e9:.1f}B active per token"
    return text
