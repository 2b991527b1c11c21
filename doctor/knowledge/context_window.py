"""How long a context a model was trained (or extended by its authors) for, and what running it longer takes.

From config.json: max_position_embeddings, and a rope_scaling block (YaRN, Llama-3's, linear, dynamic) whose
`original_max_position_embeddings` x `factor` is the length its authors extended it to. A few families document a
shorter native length than max_position_embeddings says; those are listed with their source. Past that length
the positions are ones the model never saw: RoPE scaling (YaRN) stretches them, at a quality cost that is
published for no family the doctor knows, so it is reported as unknown, never borrowed from another model.

llama.cpp's flags for YaRN: --rope-scaling yarn --rope-scale F --yarn-orig-ctx N (common/arg.cpp); transformers,
vLLM and ExLlamaV2 read a rope_scaling block from config.json ({"rope_type": "yarn", "factor": F,
"original_max_position_embeddings": N}, as Qwen's model cards tell users to add).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from doctor.model.model_dir import ModelConfig

LLAMA_CPP_ARG = "https://github.com/ggml-org/llama.cpp/blob/master/common/arg.cpp (--rope-scaling, --rope-scale, --yarn-orig-ctx)"
# model_type -> (native context, the YaRN factor its authors document, source): K, as the model cards state them
NATIVE: dict[str, tuple[int, float, str]] = {
    "qwen3": (32768, 4.0, "https://huggingface.co/Qwen/Qwen3-32B (natively 32,768 tokens; 131,072 with YaRN, "
                          "factor 4.0, original_max_position_embeddings 32768)"),
    "qwen3_moe": (32768, 4.0, "https://huggingface.co/Qwen/Qwen3-30B-A3B (natively 32,768 tokens; 131,072 with YaRN, "
                              "factor 4.0)"),
}


@dataclass(frozen=True)
class ContextLimit:
    trained: int  # the longest context the model runs without a scaling of its own choosing (0: unknown)
    extended_by_config: bool  # its config.json already carries the authors' rope_scaling
    how: str  # where `trained` comes from
    documented_factor: float = 0.0  # a YaRN factor the authors document for longer contexts (0: none)


def _rope(config: ModelConfig) -> dict:
    if not isinstance(config.rope_scaling, str):
        return {}
    try:
        block = json.loads(config.rope_scaling)
    except ValueError:
        return {}
    return block if isinstance(block, dict) else {}


def context_limit(config: ModelConfig) -> ContextLimit:
    mpe = config.max_position_embeddings if isinstance(config.max_position_embeddings, int) else 0
    rope = _rope(config)
    kind = rope.get("rope_type") or rope.get("type")
    if rope and isinstance(rope.get("factor"), (int, float)) and kind not in (None, "default"):
        orig = rope.get("original_max_position_embeddings")
        reach = mpe or (int(orig * rope["factor"]) if isinstance(orig, int) else 0)
        return ContextLimit(reach, True, f"config.json: max_position_embeddings {reach}, reached with its own "
                                         f"rope_scaling ({kind} x{rope['factor']:g}"
                                         + (f" of {orig}" if isinstance(orig, int) else "") + ")")
    family = config.model_type if isinstance(config.model_type, str) else ""
    if family in NATIVE and (not mpe or NATIVE[family][0] <= mpe):
        native, factor, source = NATIVE[family]
        return ContextLimit(native, False, f"{family}'s native context, {source}", factor)
    if mpe:
        return ContextLimit(mpe, False, f"config.json: max_position_embeddings {mpe}, no rope_scaling")
    return ContextLimit(0, False, "config.json gives no max_position_embeddings")


def yarn_factor(context: int, trained: int) -> float:
    """The YaRN factor that reaches `context` from `trained`, rounded up to two decimals (never short of it)."""
    return math.ceil(context / trained * 100) / 100


def llama_cpp_yarn_flags(factor: float, trained: int) -> str:
    """llama.cpp's flags for a YaRN factor: printed in the plan's note and in llama-server's command alike."""
    return f"--rope-scaling yarn --rope-scale {factor:g} --yarn-orig-ctx {trained}"


def yarn_needed(config: ModelConfig, context: int) -> tuple[float, int] | None:
    """(YaRN factor, the trained length) a launch at `context` needs: None within the trained length, when it is
    unknown, or when config.json already carries the authors' own rope_scaling (the engine reads that itself)."""
    limit = context_limit(config)
    if not limit.trained or context <= limit.trained or limit.extended_by_config:
        return None
    return yarn_factor(context, limit.trained), limit.trained


def beyond_training(config: ModelConfig, context: int) -> str:
    """'' when `context` is within what the model was trained (or extended) for; otherwise one sentence: how far
    past it, the YaRN factor it would need with the flags, and that the quality cost is unknown."""
    limit = context_limit(config)
    if not limit.trained or context <= limit.trained:
        return ""
    factor = yarn_factor(context, limit.trained)
    if limit.extended_by_config:
        return (f"{context} tokens is beyond the {limit.trained} this model reaches ({limit.how}): a larger factor than "
                f"its authors chose was never validated, and its quality cost is unknown")
    if limit.documented_factor and factor <= limit.documented_factor:
        cost = (f"its authors document YaRN up to factor {limit.documented_factor:g} "
                f"({int(limit.trained * limit.documented_factor)} tokens) but publish no quality figure for it: unknown")
    elif limit.documented_factor:
        cost = (f"past the factor {limit.documented_factor:g} its authors document; quality unknown")
    else:
        cost = "no quality figure is published for this family at any factor: unknown"
    return (f"{context} tokens is {context / limit.trained:.2f}x the {limit.trained} it was trained for ({limit.how}): "
            f"it needs RoPE scaling, YaRN factor {factor:g}: llama.cpp {llama_cpp_yarn_flags(factor, limit.trained)}; "
            f"transformers, vLLM and ExLlamaV2 read \"rope_scaling\": "
            f"{{\"rope_type\": \"yarn\", \"factor\": {factor:g}, \"original_max_position_embeddings\": {limit.trained}}} "
            f"added to config.json; {cost} ({LLAMA_CPP_ARG})")
