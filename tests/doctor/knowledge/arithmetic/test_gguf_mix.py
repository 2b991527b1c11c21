"""llama-quantize's per-tensor types for a shape (doctor/knowledge/arithmetic/gguf_mix.py): MoE files against the
published file sizes, dense files against the mix the plan used before."""

from __future__ import annotations

import json
from pathlib import Path

from doctor.facts.modeldir.config import parse_config
from doctor.knowledge.arithmetic import gguf_budget as g27
from doctor.knowledge.arithmetic.gguf_mix import gguf_mix, use_more_bits
from doctor.knowledge.arithmetic.model_shape import dims
from doctor.plan.gguf_memory import header_shape

ROOT = Path(__file__).resolve().parents[4] / "fixtures"


def shape(path: str):
    return dims(parse_config(json.loads((ROOT / path / "config.json").read_text())))


# bartowski/Qwen3-30B-A3B-GGUF's file list (llama.cpp b5200), as mirrored at
# https://model.aibase.com/zh/models/details/1924737621108723712 (S): GB of 1e9 bytes
BARTOWSKI_QWEN3_30B_A3B = {"Q8_0": 32.48e9, "Q6_K": 25.10e9, "Q5_K_M": 21.74e9, "Q5_K_S": 21.10e9}
# the Q4_K_M file: 17.28 GiB ("original Q4_K_M (17.28 GB)", https://huface.ru/GOBA-AI-Labs/PrunedHub-Qwen3-30B-A3B-EN-80pct-MxMoE)
QWEN3_Q4_K_M_GIB = 17.28


def test_qwen3_30b_a3b_files_are_the_published_sizes():
    """Every type of Qwen3-30B-A3B within 0.5% of the published files; the mix puts the routed experts of the
    use_more_bits layers' ffn_down at Q6_K, like attn_v."""
    d = shape("moe/qwen3-30b-a3b")
    for ft, size in BARTOWSKI_QWEN3_30B_A3B.items():
        assert abs(gguf_mix(d, ft).total_bytes - size) < 0.005 * size, ft
    m = gguf_mix(d, "Q4_K_M")
    assert abs(m.total_bytes / 2**30 - QWEN3_Q4_K_M_GIB) < 0.005 * QWEN3_Q4_K_M_GIB
    assert set(m.bytes_by_type) == {"Q4_K", "Q6_K", "F32"}
    assert m.expert_bytes > 0.9 * m.total_bytes


def test_eight_experts_put_attention_at_q8_0_and_q5_k():
    """llama-quant.cpp: n_expert == 8 (Mixtral) bumps attn_v and attn_k to Q8_0 and attn_output to Q5_K."""
    m = gguf_mix(shape("moe/mixtral-8x7b-v0.1"), "Q4_K_M")
    assert {"Q8_0", "Q5_K", "Q6_K", "Q4_K"} <= set(m.bytes_by_type)
    # TheBloke/Mixtral-8x7B-v0.1-GGUF lists Q4_K_M at 26.44 (GiB; K): within 2%
    assert abs(m.total_bytes / 2**30 - 26.44) < 0.02 * 26.44


def test_rows_that_are_not_a_multiple_of_256_fall_back():
    """DeepSeek-V2-Lite's experts are 1408 wide: their ffn_down cannot be Q4_K/Q6_K (256-element blocks), so
    llama-quantize writes Q5_0 / Q8_0 (tensor_type_fallback)."""
    m = gguf_mix(shape("moe/deepseek-v2-lite"), "Q4_K_M")
    assert m.bytes_by_type.get("Q5_0", 0) > 0 and m.bytes_by_type.get("Q8_0", 0) > 0


def test_gpt_oss_mxfp4_moe_is_the_published_size():
    """ggml-org/gpt-oss-20b-GGUF (MXFP4 experts, Q8_0 elsewhere) is about 12.1 GB (K: the Hub's listing)."""
    m = gguf_mix(shape("moe/gpt-oss-20b"), "MXFP4_MOE")
    assert abs(m.total_bytes - 12.1e9) < 0.03 * 12.1e9


def test_a_dense_mix_is_the_one_the_plan_used_before():
    for name in ("models/qwen3-32b", "models/qwen2.5-32b-instruct"):
        d = shape(name)
        for ft in ("Q4_K_M", "Q8_0", "Q6_K"):
            old = g27.quant_weights(header_shape(d), ft)
            new = gguf_mix(d, ft)
            assert abs(new.total_bytes - old.total_bytes) < 1e-4 * old.total_bytes, (name, ft)
            assert sum(x.alloc for x in new.layers) == sum(old.layer_alloc_bytes), (name, ft)


def test_use_more_bits_is_the_same_rule():
    assert [use_more_bits(i, 48) for i in range(48)] == [g27.use_more_bits(i, 48) for i in range(48)]
