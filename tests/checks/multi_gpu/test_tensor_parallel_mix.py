"""tensor-parallel-mix: tensor parallelism over cards of different memory is bounded by the smallest (pass, warn, skip)."""

from __future__ import annotations

from dataclasses import replace

from conftest import MACHINES

from checks.base import CheckContext
from checks.multi_gpu.tensor_parallel_mix import CHECK
from doctor.facts.replay import load_document
from doctor.model.findings import Status
from doctor.model.plan import Plan
from doctor.model.unknown import Unknown

MIXED = load_document(str(MACHINES / "mixed-2080ti-v100.json")).facts  # an 11 GiB 2080 Ti beside a 16 GiB V100
EQUAL = load_document(str(MACHINES / "v100-sxm2-4x-nvlink.json")).facts  # four 16 GiB V100s


def judge(facts, **plan):
    return CHECK.run(CheckContext(facts=facts, plan=Plan(**plan)))


def test_mixed_cards_under_tensor_parallelism_warn_with_the_budget():
    f = judge(MIXED, tensor_parallel=True)
    assert f.status is Status.WARN and "GPU 0 (11 GiB) sets the budget: 22 GiB usable of 27 GiB" in f.summary
    assert f.evidence["memory_gib"] == {"0": 11.0, "1": 15.8} and f.evidence["usable_gib"] == 22.0
    assert "layer split" in f.fix


def test_equal_cards_or_a_layer_split_pass():
    assert judge(EQUAL, tensor_parallel=True).status is Status.PASS
    assert judge(MIXED).status is Status.PASS  # a layer split sizes each card's share
    assert judge(MIXED, tensor_parallel=True, gpu_indices=(1,)).status is Status.PASS  # --gpu 1: one size


def test_a_card_without_its_memory_skips_and_names_it():
    gpus = (MIXED.nvml.gpus[0], replace(MIXED.nvml.gpus[1], memory_total_mib=Unknown("NVML error")))
    f = judge(replace(MIXED, nvml=replace(MIXED.nvml, gpus=gpus)), tensor_parallel=True)
    assert f.status is Status.SKIP and "GPU 1" in f.summary
