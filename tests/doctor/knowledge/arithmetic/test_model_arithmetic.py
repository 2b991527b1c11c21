"""The seed's own arithmetic, reproduced: weights, ceiling, KV cache and the VRAM budget on a V100 16 GB."""

from __future__ import annotations

import pytest
from model_support import MODELS, V100

from doctor.facts.modeldir.directory import gather_model
from doctor.knowledge.arithmetic.decode_bytes import ArithmeticUnavailable, bytes_per_token, ceiling_tok_s
from doctor.knowledge.arithmetic.model_bytes import dims, model_bytes
from doctor.knowledge.arithmetic.vram_budget import GpuRoom, largest_fitting_seq_len, plan_budget
from doctor.knowledge.kv_cache import KV_CACHE_MODES
from doctor.model.reference import SEED_REFERENCE
from doctor.model.units import MIB

SEED_375 = gather_model(str(MODELS / "qwen2-27b-exl2-3.75bpw"))
SEED_425 = gather_model(str(MODELS / "qwen2-27b-exl2-4.25bpw"))
V100_BW = 900.0
V100_ROOM = [GpuRoom(0, "Tesla V100-PCIE-16GB", V100.gpu(0).memory_free_mib, V100.gpu(0).memory_total_mib)]


def test_reference_model_is_a_27b_qwen2():
    d = dims(SEED_375.config)
    params = d.layers * (d.hidden * (d.heads + 2 * d.kv_heads) * d.head_dim + d.heads * d.head_dim * d.hidden
                         + 3 * d.hidden * d.intermediate) + 2 * d.vocab * d.hidden
    assert 26.5e9 < params < 27.5e9
    assert (d.layers, d.kv_heads, d.head_dim) == (64, 8, 128)


@pytest.mark.parametrize("model, seed_gb, seed_tok_s", [(SEED_375, 12.7, 70.9), (SEED_425, 14.3, 62.9)])
def test_seed_weights_and_ceiling(model, seed_gb, seed_tok_s):
    b = bytes_per_token(model, 0, "fp16")
    assert b["total_bytes"] / 1e9 == pytest.approx(seed_gb, rel=0.03)
    assert ceiling_tok_s(b["total_bytes"], V100_BW) == pytest.approx(seed_tok_s, rel=0.03)
    assert b["source"].startswith("estimated from config.json")
    assert b["embedding_row_bytes"] == 5120 * 2 and b["kv_read_bytes"] == 0


def test_3_75_bpw_matches_the_seed_reference_table():
    ceiling = ceiling_tok_s(bytes_per_token(SEED_375)["total_bytes"], V100_BW)
    assert round(ceiling) == 72 and abs(ceiling - SEED_REFERENCE["ceiling_tok_s"]) < 1.5
    assert ceiling > SEED_REFERENCE["measured_tok_s"]  # the seed's 64 tok/s sits under the ceiling


def test_q8_cache_at_4096_tokens_is_about_half_a_gigabyte():
    b = plan_budget(model_bytes(SEED_375), dims(SEED_375.config), V100_ROOM, 4096, "q8", (15.5,)).devices[0].components
    cache = b["kv_cache"] + b["cache_fp16_scratch"]
    assert 0.5e9 <= cache <= 0.6e9
    assert b["kv_cache"] == 2.125 * 1024 * 64 * 4096  # 2.125E per token per layer


def test_budget_passes_at_8192_with_q8_on_a_v100():
    b = plan_budget(model_bytes(SEED_375), dims(SEED_375.config), V100_ROOM, 8192, "q8")
    assert b.fits and b.margin_bytes > 128 * MIB


def test_budget_fails_clearly_at_32768_with_fp16():
    b = plan_budget(model_bytes(SEED_375), dims(SEED_375.config), V100_ROOM, 32768, "fp16")
    assert not b.fits and -b.margin_bytes > 4 * 1024 * MIB  # over 4 GiB short: not a rounding question
    assert b.devices[0].components["kv_cache"] == 8 * 1024 ** 3


@pytest.mark.parametrize("mode, per_e", [("fp16", 4), ("fp8", 2), ("q4", 1.125), ("q6", 1.625), ("q8", 2.125)])
def test_kv_element_sizes(mode, per_e):
    m = KV_CACHE_MODES[mode]
    assert m.bytes_per_token_layer(8, 128) == per_e * 1024
    assert m.fp16_scratch_pair == (mode != "fp16")
    assert m.source.startswith("https://github.com/turboderp-org/exllamav2") and m.confidence == "P"


def test_quantized_cache_adds_one_full_length_fp16_pair():
    mb, d = model_bytes(SEED_375), dims(SEED_375.config)
    q4 = plan_budget(mb, d, V100_ROOM, 8192, "q4", (15.5,)).devices[0].components
    fp16 = plan_budget(mb, d, V100_ROOM, 8192, "fp16", (15.5,)).devices[0].components
    assert q4["cache_fp16_scratch"] == 4 * 1024 * 8192 and fp16["cache_fp16_scratch"] == 0


def test_quantized_cache_costs_decode_bandwidth():
    fp16 = bytes_per_token(SEED_375, 8192, "fp16")["kv_read_bytes"]
    q8 = bytes_per_token(SEED_375, 8192, "q8")["kv_read_bytes"]
    assert fp16 == 64 * 8192 * 4 * 1024 and q8 == 64 * 8192 * (2.125 + 8) * 1024


def test_breakdown_says_what_was_counted():
    b = bytes_per_token(SEED_375, 4096, "q8")
    assert set(b) >= {"weights_bytes", "lm_head_bytes", "embedding_row_bytes", "kv_read_bytes", "total_bytes", "counted", "source"}
    assert b["total_bytes"] == b["weights_bytes"] + b["lm_head_bytes"] + b["embedding_row_bytes"] + b["kv_read_bytes"]
    assert "one embedding row" in b["counted"] and "LM head" in b["counted"]
    assert b["lm_head_bytes"] == 152064 * 5120 * 6 / 8  # head_bits 6


def test_larger_max_seq_len_tables_are_ordered_by_cache_size():
    mb, d = model_bytes(SEED_375), dims(SEED_375.config)
    t = {m: largest_fitting_seq_len(mb, d, V100_ROOM, m) for m in KV_CACHE_MODES}
    assert t["q4"] > t["q6"] > t["fp8"] > t["q8"] > t["fp16"] > 4096
    assert all(v % 256 == 0 for v in t.values())
    assert plan_budget(mb, d, V100_ROOM, t["q8"], "q8").fits and not plan_budget(mb, d, V100_ROOM, t["q8"] + 256, "q8").fits


def test_gpu_split_places_layers_on_two_cards():
    mb, d = model_bytes(SEED_425), dims(SEED_425.config)
    rooms = V100_ROOM * 2
    b = plan_budget(mb, d, rooms, 16384, "fp16", (8.0, 8.0))
    assert b.fits and b.loader == "load(gpu_split)"
    assert [x.layers for x in b.devices][0] > 0 and sum(x.layers for x in b.devices) == 64
    assert b.devices[1].components["weights"] > mb.lm_head_bytes  # the head went with the last layers


def test_unquantized_models_allocate_no_fixed_scratch():
    fp16 = gather_model(str(MODELS / "tiny-fp16"))
    b = plan_budget(model_bytes(fp16), dims(fp16.config), V100_ROOM, 4096, "fp16", quantized=False)
    assert b.devices[0].components["fixed_scratch"] == 0


def test_header_sizes_beat_the_config_estimate():
    m = gather_model(str(MODELS / "tiny-exl2"))
    mb = model_bytes(m)
    assert mb.source == "safetensors headers"
    assert mb.gpu_bytes == m.weights.total_bytes - m.weights.embedding_bytes
    assert mb.embedding_bytes == 128 * 32 * 2


def test_tied_head_is_counted_again_on_the_gpu():
    gemma = gather_model(str(MODELS / "gemma-3-27b-it"))
    mb = model_bytes(gemma)
    assert mb.lm_head_bytes == mb.embedding_bytes == 262208 * 5376 * 2


@pytest.mark.parametrize("name, words", [("tiny-gguf", "GGUF"), ("tiny-truncated", "damaged"), ("tiny-malformed-config", "config.json")])
def test_arithmetic_refuses_what_it_cannot_know(name, words):
    with pytest.raises(ArithmeticUnavailable, match=words):
        bytes_per_token(gather_model(str(MODELS / name)), 0)


def test_bad_arguments():
    with pytest.raises(ValueError):
        bytes_per_token(SEED_375, 0, "q5")
    with pytest.raises(ValueError):
        ceiling_tok_s(0, 900)
