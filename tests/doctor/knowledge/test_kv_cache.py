"""KV bytes per token, written once (KvCacheMode.bytes_per_token), against ExLlamaV2 0.3.2's cache.py allocations."""

import pytest

from doctor.knowledge.kv_cache import KV_CACHE_MODES

# ExLlamaV2 0.3.2 cache.py, per token per layer with E = kv_heads x head_dim: K bits, V bits, and for the quantized
# modes one FP16 scale per 32 values of K and of V (shape_s = head_dim // 32).
EXLLAMAV2_BITS = {"fp16": (16, 16, False), "fp8": (8, 8, False), "q8": (8, 8, True), "q6": (8, 4, True), "q4": (4, 4, True)}


def exllamav2_bytes(mode: str, layers: int, kv_heads: int, head_dim: int) -> int:
    k_bits, v_bits, scales = EXLLAMAV2_BITS[mode]
    e = kv_heads * head_dim
    per_layer = e * k_bits // 8 + e * v_bits // 8 + (2 * kv_heads * (head_dim // 32) * 2 if scales else 0)
    return layers * per_layer


@pytest.mark.parametrize("mode", sorted(EXLLAMAV2_BITS))
@pytest.mark.parametrize("layers, kv_heads, head_dim", [(64, 8, 128), (32, 8, 128), (28, 4, 128), (62, 16, 256)])
def test_bytes_per_token_is_exllamav2s_allocation(mode, layers, kv_heads, head_dim):
    assert KV_CACHE_MODES[mode].bytes_per_token(layers, kv_heads, head_dim) == exllamav2_bytes(mode, layers, kv_heads, head_dim)


def test_qwen_27b_figures():
    assert KV_CACHE_MODES["fp16"].bytes_per_token(64, 8, 128) == 262_144
    assert KV_CACHE_MODES["q8"].bytes_per_token(64, 8, 128) == 139_264  # the fake probe worker's figure


def test_the_budget_reports_the_same_figure():
    from model_support import MODELS, findings

    budget = findings(MODELS / "qwen2-27b-exl2-3.75bpw", max_seq_len=8192, cache_mode="q8")["memory-budget"]
    assert budget.evidence["kv_bytes_per_token"] == exllamav2_bytes("q8", 64, 8, 128) == 139_264
