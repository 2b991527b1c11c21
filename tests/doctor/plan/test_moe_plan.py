"""Issue 37's done-when for a MoE on a V100 16 GB: Qwen3-30B-A3B's Q4_K_M does not fit whole, the plan offers
expert offload with the host RAM it takes and a speed range; EXL2 rows size all 30.5B weights at their bits."""

from __future__ import annotations

import json
from pathlib import Path

from doctor.facts.modeldir.config import parse_config
from doctor.knowledge.arithmetic.gguf_mix import gguf_mix
from doctor.knowledge.arithmetic.model_shape import dims, parameter_count
from doctor.knowledge.gpus import spec_for_key
from doctor.knowledge.host_memory import HOST_READ_SHARE
from doctor.model.quant_plan import QuantCandidate
from doctor.plan import gguf_memory as gm
from doctor.plan.build import build_plan
from doctor.plan.rows import Setting

ROOT = Path(__file__).resolve().parents[3] / "fixtures"
V100 = spec_for_key("v100-pcie-16gb")


def config(path: str):
    return parse_config(json.loads((ROOT / path / "config.json").read_text()))


def plan(path: str, context: int = 8192):
    """The standard versions made from the base model (a Hub id: without one there is nothing to download or run)."""
    return build_plan(path, "fixture", config(path), (), (V100,), context, base_repo=f"fixture/{Path(path).name}")


def test_qwen3_30b_a3b_q4_k_m_does_not_fit_whole_and_is_offered_with_experts_in_host_ram():
    p = plan("moe/qwen3-30b-a3b")
    whole = [r for r in p.rows if r.option.label == "GGUF Q4_K_M" and r.offload is None]
    assert whole and not any(r.fits for r in whole)
    off = [r for r in p.rows if r.option.label.startswith("GGUF Q4_K_M,") and r.offload is not None]
    assert off and all(r.fits and r.offload.kind == "experts" for r in off)
    r = max(off, key=lambda x: x.speed.mid)
    assert 1 <= r.offload.layers < 48 and f"--n-cpu-moe {r.offload.layers}" in r.commands["run"]
    assert r.peak_bytes[0] <= r.capacity_bytes[0]
    assert 1e9 < r.offload.host_bytes < 18.6e9
    assert r.speed.low < r.speed.mid < r.speed.high and r.speed.confidence == "K"
    assert "host" in r.speed.source and "min_batch_size = 32" in r.speed.source
    assert "Ollama cannot keep only the experts" in r.offload.how
    assert any(n.startswith("GGUF Q4_K_M does not fit whole") and "host RAM" in n for n in p.notes)
    assert "128 experts of FFN 768 (8 active)" in p.shape


def test_exl2_rows_size_all_the_weights_at_their_bits():
    """30.5B weights at 2.5 bpw are about 9.5 GB: the row's peak is that plus cache and buffers, not 76 GB."""
    p = plan("moe/qwen3-30b-a3b")
    total = parameter_count(dims(config("moe/qwen3-30b-a3b"))).total
    for bpw in (2.5, 3.0, 4.0):
        r = next(r for r in p.rows if r.option.label == f"EXL2 {bpw:g} bpw" and r.cache == "q4")
        weights = total * bpw / 8
        assert weights < r.peak_bytes[0] < weights + 3.5e9, (bpw, r.peak_bytes[0])
    assert next(r for r in p.rows if r.option.label == "EXL2 2.5 bpw" and r.cache == "q4").fits


def test_moe_decode_reads_the_active_experts_not_all_of_them():
    p = plan("moe/qwen3-30b-a3b")
    moe = next(r for r in p.rows if r.option.label == "GGUF Q3_K_M" and r.cache == "f16")
    dense = next(r for r in plan("models/qwen3-32b").rows if r.option.label == "GGUF Q3_K_M" and r.cache == "f16")
    assert moe.ceiling_tok_s > 5 * dense.ceiling_tok_s


def test_a_dense_model_that_does_not_fit_is_offered_with_layers_on_the_cpu():
    p = plan("models/qwen2.5-32b-instruct")
    off = [r for r in p.rows if r.offload is not None and r.option.label.startswith("GGUF Q4_K_M,")]
    assert off and all(r.offload.kind == "layers" for r in off)
    r = off[0]
    assert f"-ngl {64 - r.offload.layers}" in r.commands["run"] and "num_gpu" in r.offload.how
    assert r.speed.mid < 20  # a dense layer on the CPU is read whole


def test_the_host_read_share_reproduces_the_measurement_it_was_fitted_on():
    """llmfit PR #755: RTX 2080 (448 GB/s) + ~102 GB/s host, Qwen3-30B-A3B Q4_K_M --n-cpu-moe 36: 36.7 tok/s.
    Our bytes with the fitted share and a GPU efficiency of 0.55 (the PR's roofline) land within 10% of it."""
    d = dims(config("moe/qwen3-30b-a3b"))
    shape = gm.gguf_shape(d, None, None, "Q4_K_M")
    host = gm.host_read_bytes(d, shape, 36)
    gpu = gm.gpu_read_shares(d, shape, 0, "f16", [8e9], 36)[0]
    ms = gpu / (448e9 * 0.55) * 1000 + host / (102e9 * HOST_READ_SHARE.mid) * 1000
    assert abs(1000 / ms - 36.7) < 0.1 * 36.7
    assert abs(gguf_mix(d, "Q4_K_M").total_bytes - 18.6e9) < 0.4e9


def test_setting_rows_for_a_candidate_from_the_hub_use_its_file_size():
    d = dims(config("moe/qwen3-30b-a3b"))
    c = QuantCandidate("gguf", "GGUF Q4_K_M", "org/x", filename="x.gguf", gguf_type="Q4_K_M", download_bytes=18_600_000_000)
    s = Setting(config("moe/qwen3-30b-a3b"), d, (V100,))
    shape = gm.gguf_shape(d, c.download_bytes, None, c.gguf_type)
    assert shape.expert_bytes > 0.9 * shape.gpu_weight_bytes and shape.active_share == 8 / 128
    assert s.dims.is_moe


def test_exllamav2_gets_no_rows_for_an_architecture_it_does_not_know():
    """DeepSeek-V2's MLA is not in ExLlamaV2 0.3.2's architecture list (it would load it as Llama and fail); Mixtral
    and Qwen3-MoE are."""
    ds = plan("moe/deepseek-v2-lite")
    assert not any(r.engine == "exllamav2" for r in ds.rows) and any(r.engine == "llama.cpp" for r in ds.rows)
    assert any("does not know DeepseekV2ForCausalLM" in n for n in ds.notes)
    assert any(r.engine == "exllamav2" for r in plan("moe/mixtral-8x7b-v0.1").rows)


def test_mla_caches_one_latent_per_token():
    """DeepSeek-V2-Lite in llama.cpp caches K of kv_lora_rank + rope (576) and V of kv_lora_rank (512) per token and
    layer, not 16 heads x 128 twice: 27 x 1088 x 2 bytes in f16."""
    d = dims(config("moe/deepseek-v2-lite"))
    assert gm.kv_bytes(d, 4096, "f16") == 4096 * 27 * (576 + 512) * 2
