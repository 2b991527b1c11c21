"""What a GGUF header says about the model's shape and where its bytes are, without its tensor data.

Filled by doctor/facts/modeldir/gguf_header.py from the tensor infos; used by doctor/knowledge/arithmetic/gguf_budget.py.
Sizes are ggml_nbytes of each tensor; `gpu_alloc_bytes` adds what ggml-cuda allocates beyond it
(padding of quantized rows to 512 elements, 128-byte buffer alignment).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class GgufShape:
    """The decoder's dimensions from `{arch}.*` metadata keys (head dims default to n_embd / n_head)."""

    architecture: str
    n_layer: int
    n_embd: int
    n_ff: int
    n_head: int
    n_head_kv: int
    head_dim_k: int
    head_dim_v: int
    n_vocab: int
    context_length: int = 0  # the model's trained context (0: not in the header)
    # a mixture of experts ({arch}.expert_count etc., llama.cpp src/llama-arch.cpp LLM_KV_NAMES; 0: dense)
    n_expert: int = 0
    n_expert_used: int = 0
    n_ff_exp: int = 0  # one routed expert's FFN width
    n_ff_shexp: int = 0  # the shared experts' FFN width (Qwen2-MoE writes it; DeepSeek writes a count instead)
    n_expert_shared: int = 0
    n_leading_dense: int = 0  # dense layers before the routed ones (DeepSeek's first_k_dense_replace)
    kv_lora_rank: int = 0  # multi-head latent attention (DeepSeek-V2/V3)

    @property
    def expert_read_share(self) -> float:
        """The share of the routed experts a decoded token reads (1.0 for a dense model)."""
        return self.n_expert_used / self.n_expert if self.n_expert > 1 and self.n_expert_used else 1.0

    @property
    def n_embd_k_gqa(self) -> int:
        return self.n_head_kv * self.head_dim_k

    @property
    def n_embd_v_gqa(self) -> int:
        return self.n_head_kv * self.head_dim_v


@dataclass(frozen=True)
class GgufWeights:
    """Tensor bytes grouped the way llama.cpp places them: input embedding on the host, repeating layers, output."""

    total_bytes: int  # every tensor's data
    embedding_bytes: int  # token_embd: kept in host memory by llama.cpp, one row read per token
    output_bytes: int  # output.weight + output_norm (+ the tied head: 0 when tied to token_embd)
    output_alloc_bytes: int  # the same as ggml-cuda allocates it
    layer_bytes: tuple[int, ...] = ()  # blk.N.* per layer
    layer_alloc_bytes: tuple[int, ...] = ()  # the same as ggml-cuda allocates it
    other_bytes: int = 0  # anything else (rope factors, ...): placed with the output
    bytes_by_type: dict[str, int] = field(default_factory=dict)
    tied_output: bool = False  # no output.weight: the head reads token_embd (which then also goes to the GPU)
    layer_expert_bytes: tuple[int, ...] = ()  # of layer_bytes, the routed experts' tensors (blk.N.ffn_*_exps.*)
