"""The plan's time model: each engine's context term (doctor/knowledge/arithmetic/decode_time.py), against the figures they
were fitted on (benchmarks/results/issue28-accuracy/README.md) and where they must be zero."""

from __future__ import annotations

import pytest

from doctor.knowledge.arithmetic import decode_time as dt
from doctor.knowledge.arithmetic.decode_bytes import read_ms
from doctor.knowledge.arithmetic.model_bytes import ModelDims

D27 = ModelDims(layers=64, hidden=5120, heads=40, kv_heads=8, head_dim=128, intermediate=21760, vocab=8192, tied=False)
MHA = ModelDims(layers=32, hidden=4096, heads=32, kv_heads=32, head_dim=128, intermediate=11008, vocab=32000, tied=False)
E = 8 * 128


def test_repeat_kv_copies_k_and_v_to_each_query_head_without_flash_attn():
    # 2 (written, read back) x n_rep 5 x 4E (FP16 K and V) per past token and layer: 10.7 GB a token at 4096 past
    assert dt.exl2_copy_bytes(D27, 4096, flash_attn=False) == 4096 * 2 * 5 * 4 * E
    assert D27.layers * dt.exl2_copy_bytes(D27, 4096, False) == pytest.approx(10.74e9, rel=1e-3)


@pytest.mark.parametrize("dims, past, fa", [(D27, 4096, True), (D27, 0, False), (MHA, 4096, False)])
def test_no_copy_with_flash_attn_an_empty_cache_or_ungrouped_heads(dims, past, fa):
    assert dt.exl2_copy_bytes(dims, past, fa) == 0


@pytest.mark.parametrize("cc, has", [("6.1", False), ("7.0", False), ("7.5", False), ("8.0", True), ("9.0", True)])
def test_flash_attn_is_assumed_from_sm_80(cc, has):
    assert dt.exl2_flash_attn(cc) is has


def test_exl2_layer_bytes_add_the_cache_its_round_trip_and_the_copy():
    copy = dt.exl2_copy_bytes(D27, 1000, False)
    assert dt.exl2_layer_bytes(D27, 1000, "fp16", False) == 1000 * 4 * E + copy
    assert dt.exl2_layer_bytes(D27, 1000, "q8", False) == 1000 * (round(2.125 * E) + 8 * E) + copy
    assert dt.exl2_layer_bytes(D27, 1000, "q8", True) == 1000 * (round(2.125 * E) + 8 * E)


def test_llama_f16_cache_is_read_at_the_bandwidth_on_the_h200_and_widened_elsewhere():
    b = 16384 * 4 * E * 64  # K and V in f16 over 64 layers
    h200 = dt.llama_context_ms(D27, 16384, "f16", 64, 4800, "h200")
    assert h200.mid == pytest.approx(read_ms(b, 4800)) and (h200.fast, h200.slow) == pytest.approx(
        (0.95 * h200.mid, 1.1 * h200.mid))
    v100 = dt.llama_context_ms(D27, 16384, "f16", 64, 900, "v100-pcie-16gb")
    assert v100.mid == pytest.approx(read_ms(b, 900)) and v100.slow == pytest.approx(1.5 * v100.mid)
    assert dt.llama_context_ms(D27, 16384, "f16", 0, 4800, "h200") == dt.ZERO


@pytest.mark.parametrize("cache, past, low_us, high_us", [("q8_0", 16384, 0.330, 0.358), ("q4_0", 8192, 0.352, 0.374)])
def test_llama_quantized_cache_cost_reproduces_the_h200_figures(cache, past, low_us, high_us):
    """Per past token over 64 layers: q8_0 0.330 and 0.358 us (two calls), q4_0 0.363 us (one)."""
    t = dt.llama_context_ms(D27, past, cache, 64, 4800, "h200")
    per_token_us = [x * 1000 / past for x in (t.fast, t.mid, t.slow)]
    assert per_token_us[0] <= low_us + 0.005 and per_token_us[2] >= high_us - 0.005
    assert low_us <= per_token_us[1] <= high_us
    # not the bytes: a q8_0 cache's bytes at 4800 GB/s would be 12x less
    assert t.mid > 10 * read_ms(past * 64 * 2 * 1.0625 * E, 4800)


def test_llama_quantized_cost_scales_by_bandwidth_off_the_h200_with_a_wider_range():
    h = dt.llama_context_ms(D27, 4096, "q8_0", 64, 4800, "h200")
    v = dt.llama_context_ms(D27, 4096, "q8_0", 64, 900, "v100-pcie-16gb")
    assert v.mid == pytest.approx(h.mid * 4800 / 900)
    assert v.fast == pytest.approx(h.fast * 4800 / 900 * 0.4) and v.slow == pytest.approx(h.slow * 4800 / 900 * 1.25)
    # and by the query width: half the heads, half the cost
    half = ModelDims(64, 2560, 20, 4, 128, 21760, 8192, False)
    assert dt.llama_context_ms(half, 4096, "q8_0", 64, 4800, "h200").mid == pytest.approx(h.mid / 2)


def test_an_unknown_llama_cache_type_is_refused():
    with pytest.raises(ValueError, match="q5_1"):
        dt.llama_context_ms(D27, 100, "q5_1", 64, 900, "v100-pcie-16gb")


def test_context_terms_say_what_they_are_and_how_sure():
    assert dt.context_term("exllamav2", "q8", "7.0", "v100-pcie-16gb")[0].startswith("K/V copied to every query head")
    assert dt.context_term("exllamav2", "q8", "9.0", "h200")[0].startswith("flash-attn")
    assert dt.context_term("exllamav2", "q8", "9.0", "h200", flash_attn=False)[2] == "P"
    what, src, conf = dt.context_term("llama.cpp", "q8_0", "7.0", "v100-pcie-16gb")
    assert conf == "K" and "scaled from the H200 by bandwidth" in what and "issue28-accuracy" in src
    assert dt.context_term("llama.cpp", "q8_0", "9.0", "h200")[2] == "P"
    assert dt.context_term("llama.cpp", "f16", "7.0", "v100-pcie-16gb")[2] == "K"
    assert dt.LLAMA_QUANT_CACHES == ("q8_0", "q4_0")
