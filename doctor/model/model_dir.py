"""What the model directory holds, as read from its headers: config, quantization, tensor sizes.

These are the fact types only; doctor/facts/modeldir/directory.py and its header readers fill them in.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from doctor.model.gguf import GgufShape, GgufWeights
from doctor.model.unknown import Maybe, Unknown

MISSING = Unknown("not in config.json")
NOT_DECLARED = Unknown("not declared")


@dataclass(frozen=True)
class ModelConfig:
    architecture: Maybe[str] = MISSING
    model_type: Maybe[str] = MISSING
    num_hidden_layers: Maybe[int] = MISSING
    hidden_size: Maybe[int] = MISSING
    num_attention_heads: Maybe[int] = MISSING
    num_key_value_heads: Maybe[int] = MISSING
    head_dim: Maybe[int] = MISSING
    intermediate_size: Maybe[int] = MISSING
    vocab_size: Maybe[int] = MISSING
    tie_word_embeddings: Maybe[bool] = MISSING
    torch_dtype: Maybe[str] = MISSING
    max_position_embeddings: Maybe[int] = MISSING
    sliding_window: Maybe[int] = MISSING
    sliding_layers: Maybe[int] = MISSING  # how many layers use the sliding window
    rope_theta: Maybe[float] = MISSING
    rope_scaling: Maybe[str] = MISSING  # compact JSON of the rope_scaling block
    num_experts: Maybe[int] = MISSING  # routed experts per MoE layer (num_experts, num_local_experts, n_routed_experts)
    attention_bias: bool = False
    # mixture of experts (doctor/facts/modeldir/config.py reads each family's keys into these)
    num_experts_per_tok: Maybe[int] = MISSING  # routed experts each token uses
    moe_intermediate_size: Maybe[int] = MISSING  # one routed expert's FFN width (intermediate_size where none is given)
    shared_expert_intermediate_size: Maybe[int] = MISSING  # all shared experts' FFN width together (0: none)
    moe_layers: Maybe[int] = MISSING  # decoder layers that route to experts; the others have a dense FFN
    # multi-head latent attention (DeepSeek-V2/V3): K and V are kept as one compressed latent per token
    kv_lora_rank: Maybe[int] = MISSING
    q_lora_rank: Maybe[int] = MISSING
    qk_rope_head_dim: Maybe[int] = MISSING
    qk_nope_head_dim: Maybe[int] = MISSING
    v_head_dim: Maybe[int] = MISSING
    original_max_position_embeddings: Maybe[int] = MISSING  # the pre-training context a rope_scaling block extends

    @property
    def is_moe(self) -> bool:
        return isinstance(self.num_experts, int) and self.num_experts > 1

    @property
    def is_mla(self) -> bool:
        return isinstance(self.kv_lora_rank, int) and self.kv_lora_rank > 0

    @property
    def kv_width(self) -> Maybe[int]:
        """E = kv_heads x head_dim, the K (or V) elements per token per layer."""
        if isinstance(self.num_key_value_heads, int) and isinstance(self.head_dim, int):
            return self.num_key_value_heads * self.head_dim
        return Unknown("kv heads or head_dim unknown")


@dataclass(frozen=True)
class QuantFacts:
    method: str  # exl2 | gptq | awq | bnb-4bit | bnb-8bit | fp16 | bf16 | fp32 | gguf | unknown
    declared_in: str  # where the method came from: config.json quantization_config | quantize_config.json | tensors | ...
    tensor_format: str = "none"  # what the tensor names say: exl2 | gptq | unquantized | mixed | none
    bits: Maybe[float] = NOT_DECLARED
    head_bits: Maybe[float] = NOT_DECLARED
    group_size: Maybe[int] = NOT_DECLARED
    desc_act: Maybe[bool] = NOT_DECLARED
    sym: Maybe[bool] = NOT_DECLARED
    checkpoint_format: Maybe[str] = NOT_DECLARED
    awq_version: Maybe[str] = NOT_DECLARED  # gemm | gemv | ...
    bnb_quant_type: Maybe[str] = NOT_DECLARED  # nf4 | fp4
    compute_dtype: Maybe[str] = NOT_DECLARED  # bnb_4bit_compute_dtype: the dtype the matmuls run in
    g_idx_present: bool = False
    act_order_in_tensors: Maybe[bool] = Unknown("no g_idx tensor read")  # g_idx not sequential
    disagreement: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class GgufFacts:
    path: str
    file_bytes: int
    version: Maybe[int]
    tensor_count: Maybe[int]
    kv_count: Maybe[int]
    architecture: Maybe[str]
    name: Maybe[str]
    file_type: Maybe[str]  # "Q4_K_M"
    problem: str = ""
    shape: GgufShape | None = None  # the decoder's dimensions, when the header has them
    weights: GgufWeights | None = None  # tensor bytes by placement, from the tensor infos


@dataclass(frozen=True)
class ShardFacts:
    name: str
    file_bytes: int
    tensor_count: int
    data_bytes: int
    problem: str = ""


@dataclass(frozen=True)
class WeightFacts:
    """Tensor sizes as the safetensors headers state them (after checking the headers against the files)."""

    source: str
    shards: tuple[ShardFacts, ...]
    total_bytes: int
    tensor_count: int
    dtype_bytes: dict[str, int] = field(default_factory=dict)
    suffix_counts: dict[str, int] = field(default_factory=dict)  # last name part: weight, q_weight, qweight, g_idx ...
    embedding_bytes: Maybe[int] = Unknown("no embedding tensor found")
    embedding_dtype: Maybe[str] = Unknown("no embedding tensor found")
    embedding_shape: tuple[int, ...] = ()  # (vocab, hidden)
    lm_head_bytes: int = 0  # 0: no lm_head tensor, the head is tied to the embedding
    layer_bytes: tuple[int, ...] = ()  # per decoder layer
    vision_bytes: int = 0  # vision tower / projector: not read when decoding text
    other_bytes: int = 0  # final norm and anything else
    fp32_bytes: int = 0  # unquantized FP32 tensors (halved on the GPU by ExLlamaV2)
    index_missing: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class ModelFacts:
    path: str  # as given
    exists: bool
    kind: str  # directory | gguf-file | safetensors-file | file | missing | unreadable
    resolved: Maybe[str] = Unknown("not resolved")
    problem: str = ""  # what stops the model from being read at all
    files: tuple[str, ...] = ()  # top-level names, capped
    config: ModelConfig | None = None
    config_problem: str = ""
    quant: QuantFacts | None = None
    weights: WeightFacts | None = None
    gguf: GgufFacts | None = None
    bytes_read: int = 0  # how much the doctor read: headers and configs only
    # read beside a missing path, so the model-path check never touches the disk (nor a replay this machine's):
    near_matches: tuple[str, ...] = ()  # siblings whose names are close to the missing one, best first
    first_piece_exists: bool = False  # the shell split --model into pieces, and the first one exists on its own

    @property
    def estimated_from_config(self) -> bool:
        return self.weights is None and self.config is not None
