"""A split model's ceiling: each GPU's share at its own bandwidth (V100 + P40), in CUDA order (issue 15)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from conftest import MACHINES
from model_support import MODELS, findings

from doctor.facts.replay import load_document

V100 = load_document(str(MACHINES / "v100-pcie-16gb-healthy.json")).facts
P40 = load_document(str(MACHINES / "p40-torch-cu126.json")).facts.nvml.gpus[0]
V100_P40 = replace(V100, nvml=replace(V100.nvml, gpus=(V100.nvml.gpus[0], replace(P40, index=1, pci_bus_id="00000000:86:00.0"))))
MODEL = MODELS / "qwen2-27b-exl2-3.75bpw"


def test_v100_plus_p40_split_runs_at_the_p40s_pace():
    f = findings(MODEL, facts=V100_P40, max_seq_len=8192, cache_mode="q8", gpu_split=(7.0, 7.0))["ceiling"]
    ev = f.evidence
    alone = ev["ceiling_tok_s_empty_cache"]
    v100_ms, p40_ms = (float(s.split("= ")[1].split(" ms")[0]) for s in ev["split_shares"])
    assert ev["split_ceiling_tok_s"] == pytest.approx(1000 / (v100_ms + p40_ms), rel=0.01)
    assert ev["split_ceiling_tok_s"] < 0.6 * alone  # the P40's 346 GB/s share dominates each token
    assert p40_ms > 2 * v100_ms and "the slowest share is Tesla P40's" in f.summary


def test_autosplit_that_fits_on_the_first_gpu_is_no_split():
    f = findings(MODEL, facts=V100_P40, max_seq_len=8192, cache_mode="q8")["ceiling"]
    assert "split_ceiling_tok_s" not in f.evidence  # ExLlamaV2 fills GPU 0 first: the P40 holds nothing


def test_gpu_split_follows_cuda_order():
    # CUDA_VISIBLE_DEVICES lists the P40 first: gpu_split's first share lands on it
    facts = replace(V100_P40, python=replace(V100_P40.python, env={"CUDA_VISIBLE_DEVICES": "1,0",
                                                                   "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}))
    f = findings(MODEL, facts=facts, max_seq_len=8192, cache_mode="q8", gpu_split=(7.0, 7.0))["ceiling"]
    assert f.evidence["split_shares"][0].startswith("CUDA 0 Tesla P40")
