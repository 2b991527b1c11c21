"""A context past what the model was trained for is flagged with the YaRN factor it needs; its quality cost is
unknown unless published for that family, and never another model's figure."""

from __future__ import annotations

import json
from pathlib import Path

from doctor.facts.modeldir.config import parse_config
from doctor.knowledge.context_window import beyond_training, context_limit, yarn_needed
from doctor.knowledge.quant_quality import model_family, quality

FIX = Path(__file__).resolve().parents[3] / "fixtures"


def config(path: str, **changes):
    return parse_config({**json.loads((FIX / path / "config.json").read_text()), **changes})


def test_within_the_trained_context_nothing_is_said():
    assert beyond_training(config("moe/qwen3-30b-a3b"), 32768) == ""
    assert beyond_training(config("moe/gpt-oss-20b"), 131072) == ""  # its own YaRN x32 of 4096 reaches 131072


def test_past_it_the_yarn_factor_and_both_ways_to_set_it():
    s = beyond_training(config("moe/qwen3-30b-a3b"), 65536)
    assert "2.00x the 32768" in s and "YaRN factor 2" in s
    assert "--rope-scaling yarn --rope-scale 2 --yarn-orig-ctx 32768" in s
    assert '"rope_scaling": {"rope_type": "yarn", "factor": 2, "original_max_position_embeddings": 32768}' in s
    assert "document YaRN up to factor 4" in s and "unknown" in s
    assert "past the factor 4" in beyond_training(config("moe/qwen3-30b-a3b"), 262144)


def test_a_model_without_a_documented_native_length_uses_max_position_embeddings():
    c = config("models/qwen2.5-32b-instruct")
    assert context_limit(c).trained == 32768 and not context_limit(c).extended_by_config
    s = beyond_training(c, 40000)
    assert "YaRN factor 1.23" in s and "no quality figure is published for this family" in s


def test_past_the_configs_own_scaling_nothing_is_promised():
    s = beyond_training(config("moe/deepseek-v2-lite"), 200000)
    assert "beyond the 163840 this model reaches" in s and "yarn x40 of 4096" in s and "unknown" in s


def test_quantization_quality_is_llama3s_only_for_llama3():
    assert model_family("llama", 128256) == "llama3" and model_family("qwen3_moe", 151936) == "qwen3_moe"
    q, src = quality("gguf", 4.9, "Q4_K_M", "llama3")
    assert "+0.1754 ppl (Llama-3-8B)" in q
    q, src = quality("gguf", 4.9, "Q4_K_M", "qwen3_moe")
    assert "unknown for qwen3_moe" in q and "+0.1754" not in q and "Llama-3-8B" in src


def test_the_yarn_a_launch_needs_is_the_one_the_sentence_names():
    assert yarn_needed(config("moe/qwen3-30b-a3b"), 32768) is None
    assert yarn_needed(config("moe/qwen3-30b-a3b"), 65536) == (2.0, 32768)
    assert yarn_needed(config("models/qwen2.5-32b-instruct"), 40000) == (1.23, 32768)
    assert yarn_needed(config("moe/deepseek-v2-lite"), 200000) is None  # its own rope_scaling: nothing to add


def test_llama_servers_command_carries_the_scaling_past_training_and_not_within():
    from doctor.engines.base import PlanRun
    from doctor.engines.llamacpp.plan import server_flags
    from doctor.model.quant_plan import QuantCandidate

    option = QuantCandidate(fmt="gguf", label="GGUF Q4_K_M", bpw=4.9, gguf_type="Q4_K_M", repo="org/m-GGUF")
    past = PlanRun(option, "org/m", 65536, "f16", None, None, "7.0", yarn_needed(config("moe/qwen3-30b-a3b"), 65536))
    within = PlanRun(option, "org/m", 8192, "f16", None, None, "7.0", yarn_needed(config("moe/qwen3-30b-a3b"), 8192))
    assert server_flags(past).endswith("-c 65536 -fa on --rope-scaling yarn --rope-scale 2 --yarn-orig-ctx 32768")
    assert "rope" not in server_flags(within)
