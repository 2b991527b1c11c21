"""The shape of a model as its config.json tells it: the numbers the memory and speed arithmetic needs.

Multimodal configs (Gemma-3, Qwen2-VL, Mistral-3) keep the language model under `text_config`; that
is the part that decodes tokens, so it is the part read here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from doctor.facts.files.safe_open import read_capped
from doctor.facts.files.surrogates import ESCAPED_SURROGATE, without_lone_surrogates
from doctor.model.model_dir import MISSING, ModelConfig
from doctor.model.plausible import CONFIG_RANGES, problem
from doctor.model.unknown import Maybe, Unknown

MAX_CONFIG_BYTES = 4 * 1024 * 1024
TIED_BY_DEFAULT = ("gemma", "gemma2", "gemma3", "gemma3_text")  # transformers' defaults for these model types
# Keys a published config.json may omit because transformers' config class supplies them (S: Gemma3TextConfig
# defaults as copied in several public repositories; ExLlamaV2 0.3.2 applies the same vocab default for Gemma-3)
CLASS_DEFAULTS = {"gemma3_text": {"vocab_size": 262208, "max_position_embeddings": 131072, "sliding_window_pattern": 6}}


class ConfigError(ValueError):
    """config.json cannot be used; the message names the file, the problem and the fix."""


def load_config_json(path: Path) -> dict:
    try:
        text = read_capped(path, MAX_CONFIG_BYTES, "model config").decode("utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read {path.name}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path.name} is not UTF-8 text") from None
    try:
        data = json.loads(text)
    except RecursionError:
        raise ConfigError(f"{path.name} nests too deeply to be a model config") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path.name} is broken JSON at line {exc.lineno} column {exc.colno} ({exc.msg}): "
                          "re-download it from the model's page") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path.name} is not a JSON object")
    return without_lone_surrogates(data) if ESCAPED_SURROGATE.search(text) else data  # "\ud800" cannot be printed


def _int(d: dict, *keys: str) -> Maybe[int]:
    for k in keys:
        v = d.get(k)
        if isinstance(v, int) and not isinstance(v, bool):
            return v
    return MISSING


def declared_float(v: object, missing: Unknown = MISSING) -> Maybe[float]:
    """A declared number (a config's or a quantization's); one that is not finite or overflows is kept as inf for
    scrub() to make unknown; anything else that is not a number is `missing`."""
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return missing
    try:
        return float(v)
    except OverflowError:
        return float("inf")


def _sliding(text: dict) -> tuple[Maybe[int], Maybe[int]]:
    window = text.get("sliding_window")
    if not isinstance(window, int) or isinstance(window, bool) or text.get("use_sliding_window") is False:
        return Unknown("no sliding window in use"), 0
    layers = text.get("num_hidden_layers")
    types = text.get("layer_types")
    if isinstance(types, list):
        return window, sum(1 for t in types if "sliding" in str(t))
    pattern = text.get("sliding_window_pattern")
    if isinstance(pattern, int) and pattern > 0 and isinstance(layers, int):
        return window, layers - layers // pattern  # every pattern-th layer is global (Gemma-2/3)
    return window, layers if isinstance(layers, int) else MISSING


def _moe_layers(text: dict, layers: Maybe[int], experts: Maybe[int]) -> Maybe[int]:
    """How many decoder layers route to experts, by each family's rule (transformers' modeling code):
    Qwen2/3-MoE: layer i unless i is in mlp_only_layers or (i + 1) % decoder_sparse_step != 0 (Llama-4:
    interleave_moe_layer_step);
    DeepSeek-V2/V3, GLM-4-MoE: i >= first_k_dense_replace and i % moe_layer_freq == 0; Mixtral, gpt-oss,
    OLMoE, Granite-MoE: every layer."""
    if not isinstance(experts, int) or experts <= 1:
        return 0
    if not isinstance(layers, int) or "hybrid_override_pattern" in text:
        return MISSING  # Nemotron-H's Mamba/attention/MoE pattern: not a shape this arithmetic models
    step = text.get("decoder_sparse_step", text.get("interleave_moe_layer_step"))  # Llama-4: every step-th layer
    only = text.get("mlp_only_layers")
    first = text.get("first_k_dense_replace")
    freq = text.get("moe_layer_freq")
    dense = set(only) if isinstance(only, list) else set()
    step = step if isinstance(step, int) and not isinstance(step, bool) and step > 0 else 1
    first = first if isinstance(first, int) and not isinstance(first, bool) and first > 0 else 0
    freq = freq if isinstance(freq, int) and not isinstance(freq, bool) and freq > 0 else 1
    return sum(1 for i in range(layers) if i not in dense and (i + 1) % step == 0 and i >= first and i % freq == 0)


def _shared_width(text: dict, expert_width: Maybe[int]) -> Maybe[int]:
    """All shared experts' FFN width: Qwen2-MoE's shared_expert_intermediate_size, DeepSeek's n_shared_experts x
    moe_intermediate_size, Granite-MoE-shared's shared_intermediate_size; 0 where the config names none."""
    width = _int(text, "shared_expert_intermediate_size", "shared_intermediate_size")
    if isinstance(width, int):
        return width
    if str(text.get("model_type", "")).startswith("llama4") or text.get("enable_moe_block") is True:
        # Llama-4's one shared expert, Gemma-4's dense MLP beside its experts: intermediate_size, used by every token
        return _int(text, "intermediate_size")
    n = _int(text, "n_shared_experts", "num_shared_experts")
    if isinstance(n, int):
        return n * expert_width if isinstance(expert_width, int) else MISSING
    return 0


def _original_context(rope: object) -> Maybe[int]:
    if isinstance(rope, dict):
        return _int(rope, "original_max_position_embeddings")
    return MISSING


def parse_config(data: dict) -> ModelConfig:
    """The config's shape; ConfigError when a number in it is one no model can have ("hidden_size 0")."""
    config = _parse_config(data)
    for name in CONFIG_RANGES:
        value = getattr(config, name)
        if why := problem(name, value):
            raise ConfigError(f"config.json says {name} {_shown(value)}: {why.split(' is ', 1)[-1]}; "
                              "the file is damaged or not a model config (re-download it from the model's page)")
    return config


def _shown(value: int | float) -> str:
    return repr(value) if abs(value) < 10**20 else f"{str(value)[:12]}... ({len(str(value))} digits)"


def _parse_config(data: dict) -> ModelConfig:
    inner = data.get("text_config")
    text: dict[str, Any] = inner if isinstance(inner, dict) else data
    text = {**CLASS_DEFAULTS.get(str(text.get("model_type")), {}), **text}
    archs = data.get("architectures")
    heads = _int(text, "num_attention_heads", "n_head")
    hidden = _int(text, "hidden_size", "d_model", "n_embd")
    head_dim = _int(text, "head_dim")
    if not isinstance(head_dim, int) and isinstance(hidden, int) and isinstance(heads, int) and heads:
        head_dim = hidden // heads
    kv = _int(text, "num_key_value_heads", "num_kv_heads")
    if not isinstance(kv, int) and isinstance(heads, int):
        kv = heads  # no GQA key means plain multi-head attention
    model_type = text.get("model_type") or data.get("model_type")
    tie = data.get("tie_word_embeddings", text.get("tie_word_embeddings"))
    if not isinstance(tie, bool):
        tie = (model_type in TIED_BY_DEFAULT) if isinstance(model_type, str) else MISSING
    dtype = data.get("torch_dtype") or data.get("dtype") or text.get("torch_dtype") or text.get("dtype")
    window, sliding_layers = _sliding(text)
    rope = text.get("rope_scaling")
    theta = text.get("rope_theta")
    experts = _int(text, "num_experts", "num_local_experts", "n_routed_experts", "num_routed_experts")
    layers = _int(text, "num_hidden_layers", "n_layers", "n_layer")
    moe = isinstance(experts, int) and experts > 1
    expert_width = _int(text, "moe_intermediate_size", "intermediate_size") if moe else MISSING
    return ModelConfig(
        architecture=archs[0] if isinstance(archs, list) and archs and isinstance(archs[0], str) else MISSING,
        model_type=model_type if isinstance(model_type, str) else MISSING,
        num_hidden_layers=layers,
        hidden_size=hidden, num_attention_heads=heads, num_key_value_heads=kv, head_dim=head_dim,
        intermediate_size=_int(text, "intermediate_size_mlp", "intermediate_size"),  # Llama-4's dense layers: _mlp
        vocab_size=_int(text, "vocab_size", "padded_vocab_size") or _int(data, "vocab_size"),
        tie_word_embeddings=tie,
        torch_dtype=str(dtype) if dtype else MISSING,
        max_position_embeddings=_int(text, "max_position_embeddings", "max_sequence_length", "n_positions"),
        sliding_window=window, sliding_layers=sliding_layers,
        rope_theta=declared_float(theta),
        rope_scaling=json.dumps(rope, sort_keys=True, separators=(",", ":")) if isinstance(rope, dict) else MISSING,
        num_experts=experts,
        attention_bias=bool(text.get("attention_bias")) or model_type in ("qwen2", "qwen2_moe"),
        num_experts_per_tok=_int(text, "num_experts_per_tok", "experts_per_token", "num_experts_per_token",
                                 "moe_topk", "top_k_experts") if moe else MISSING,
        moe_intermediate_size=expert_width,
        shared_expert_intermediate_size=_shared_width(text, expert_width) if moe else MISSING,
        moe_layers=_moe_layers(text, layers, experts),
        kv_lora_rank=_int(text, "kv_lora_rank"),
        q_lora_rank=_int(text, "q_lora_rank"),
        qk_rope_head_dim=_int(text, "qk_rope_head_dim"),
        qk_nope_head_dim=_int(text, "qk_nope_head_dim"),
        v_head_dim=_int(text, "v_head_dim"),
        original_max_position_embeddings=_original_context(rope),
    )
