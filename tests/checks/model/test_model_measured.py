"""Today's VRAM arithmetic against what ExLlamaV2 0.3.2 really allocated on the H200 (recorded run).

benchmarks/kv_cache_vs_exllamav2.py loaded a synthetic Llama (hidden 4096, 8 layers, 32/8 heads, FP16 and
4-bit GPTQ) with every cache mode; its JSON keeps the measured bytes. Re-deriving the predictions here from
the same shapes makes any change to the arithmetic answer to those measurements.
"""

from __future__ import annotations

import json

import pytest
from conftest import ROOT

from doctor.knowledge.arithmetic.model_bytes import ModelBytes, ModelDims
from doctor.knowledge.arithmetic.vram_budget import GpuRoom, plan_budget
from doctor.knowledge.exllamav2_memory import cuda_context_bytes

RUN = json.loads((ROOT / "benchmarks" / "results" / "kv_cache_vs_exllamav2.json").read_text())
S = RUN["shape"]
DIMS = ModelDims(S["layers"], S["hidden"], S["heads"], S["kv_heads"], S["head_dim"], S["intermediate"], S["vocab"], False)
ROWS = [r for m in RUN["models"].values() for r in m["rows"]]


def model_bytes_for(kind: str) -> ModelBytes:
    h, i, q_out, kv_out = S["hidden"], S["intermediate"], S["heads"] * S["head_dim"], S["kv_heads"] * S["head_dim"]
    mats = [(h, q_out), (h, kv_out), (h, kv_out), (q_out, h), (h, i), (h, i), (i, h)]
    if kind == "fp16":
        layer = sum(a * b * 2 for a, b in mats)
    else:  # qweight + qzeros + scales (group 128) + g_idx, as the benchmark writes them
        layer = sum(a * b // 2 + a // 128 * b // 8 * 4 + a // 128 * b * 2 + a * 4 for a, b in mats)
    layer += 2 * h * 2
    return ModelBytes(tuple([layer] * S["layers"]), S["vocab"] * h * 2, h * 2, S["vocab"] * h * 2, h * 2, "reconstructed")


def predict(row: dict):
    room = [GpuRoom(0, "H200", 140_000, 143_771)]
    return plan_budget(model_bytes_for(row["model"]), DIMS, room, row["max_seq_len"], row["cache_mode"], (130.0,),
                       quantized=row["model"] == "gptq", context_bytes=0).devices[0].components


def test_the_recorded_run_covers_every_cache_mode_on_both_paths():
    assert {(r["model"], r["cache_mode"]) for r in ROWS} == {(m, c) for m in ("fp16", "gptq") for c in ("fp16", "fp8", "q8", "q6", "q4")}
    assert RUN["gpu"]["name"] == "NVIDIA H200" and RUN["exllamav2"] == "0.3.2"


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r['model']}-{r['cache_mode']}")
def test_kv_bytes_match_what_exllamav2_allocated(row):
    c = predict(row)
    assert c["kv_cache"] + c["cache_fp16_scratch"] == row["kv_allocated_bytes"] == row["kv_cache_tensors_bytes"]


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r['model']}-{r['cache_mode']}")
def test_everything_torch_allocated_is_predicted_within_2_percent(row):
    c = predict(row)
    torch_part = sum(v for k, v in c.items() if k not in ("transient_is", "cuda_context"))
    assert torch_part == pytest.approx(row["peak_allocated_bytes"], rel=0.02)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r['model']}-{r['cache_mode']}")
def test_total_need_within_5_percent_with_the_hopper_context_allowance(row):
    c = predict(row)
    total = sum(v for k, v in c.items() if k != "transient_is") + cuda_context_bytes(RUN["gpu_cc"] if "gpu_cc" in RUN else "9.0")
    need = row["peak_allocated_bytes"] + row["cuda_context_measured_bytes"]
    assert total == pytest.approx(need, rel=0.05)
