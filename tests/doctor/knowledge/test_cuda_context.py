"""The CUDA-context allowance per engine: llama.cpp's measured on the H200 (not ExLlamaV2's 800 MiB), and the
plan's GGUF peaks of issue 28 within 3% of NVML's on the safe side with it, not 1% over as with ExLlamaV2's."""

from __future__ import annotations

import json

import pytest
from conftest import ROOT

from doctor.knowledge import cuda_context as cc
from doctor.knowledge.exllamav2_memory import cuda_context_bytes
from doctor.model.units import MIB

RECORD = json.loads((ROOT / "benchmarks/results/issue28-accuracy/plan_accuracy.json").read_text())


def test_llama_cpp_on_hopper_takes_its_measured_allowance_and_exllamav2_keeps_its_own():
    assert cc.allowance("llama.cpp", "9.0")[0] == 625 and cc.allowance("llama.cpp", "9.0")[2] == "P"
    assert cc.allowance("ollama", "9.0") == cc.allowance("llama.cpp", "9.0")
    assert cc.context_bytes("exllamav2", "9.0") == cuda_context_bytes("9.0") == 800 * MIB


@pytest.mark.parametrize("cap", ["7.0", "6.1", None, "x"])
def test_off_hopper_llama_cpp_is_an_estimate_said_so(cap):
    mib, source, conf = cc.allowance("llama.cpp", cap)
    assert mib == 500 and conf == "K" and source.startswith("estimate")


def test_the_allowance_covers_every_measured_outside_the_buffers_and_no_more_than_it_needs():
    outside = [r["outside_printed_bytes"] / MIB for r in RECORD if r["engine"] == "llama.cpp"]
    assert outside and max(outside) <= 625 < max(outside) + 5


@pytest.mark.parametrize("rec", [r for r in RECORD if r["engine"] == "llama.cpp"], ids=lambda r: r["file"])
def test_gguf_peaks_are_within_3_percent_on_the_safe_side(rec):
    assert rec["context_allowance_bytes"] == 625 * MIB
    assert 0 <= rec["peak_error_pct"] <= 3.0
