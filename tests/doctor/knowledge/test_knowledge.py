"""The knowledge base is data with provenance: every row carries a source and a confidence tag."""

from __future__ import annotations

import pytest

from doctor.knowledge import attention, cuda, gpus, torch_wheels
from doctor.model.reference import SEED_REFERENCE


def rows():
    yield from (("gpu", r.key, r.source, r.confidence) for r in gpus.GPUS)
    yield from (("wheel", f"{r.torch}+cu{r.cuda}", r.source, r.confidence) for r in torch_wheels.WHEELS)
    yield from (("nvcc", str(r.cuda_major), r.source, r.confidence) for r in cuda.NVCC_ARCHS)
    yield from (("driver", r.architecture, r.source, r.confidence) for r in cuda.DRIVER_BRANCHES)
    yield from (("flash-attn", str(r.major), r.source, r.confidence) for r in attention.FLASH_ATTN)


@pytest.mark.parametrize("kind, key, source, confidence", list(rows()))
def test_every_row_has_provenance(kind, key, source, confidence):
    assert confidence in ("P", "S", "K")
    assert "http" in source or (confidence == "K" and "not confirmed" in source), (kind, key)


def test_gpu_table_covers_the_issue_list():
    keys = {g.key for g in gpus.GPUS}
    for k in ("v100-pcie-16gb", "v100-pcie-32gb", "v100-sxm2-16gb", "v100-sxm2-32gb", "v100s-pcie-32gb", "titan-v",
              "p100-pcie-16gb", "p40", "t4", "rtx-2080-ti", "rtx-3090", "a10", "a100-40gb", "a100-80gb-sxm", "l4",
              "h100-sxm", "h200"):
        assert k in keys


@pytest.mark.parametrize("nvml_name, key", [
    ("Tesla V100-PCIE-16GB", "v100-pcie-16gb"), ("Tesla V100-SXM2-32GB", "v100-sxm2-32gb"),
    ("Tesla V100S-PCIE-32GB", "v100s-pcie-32gb"), ("Tesla P40", "p40"), ("Tesla T4", "t4"),
    ("NVIDIA H200", "h200"), ("NVIDIA A10", "a10"), ("NVIDIA A100-SXM4-40GB", "a100-40gb"),
])
def test_nvml_names_match_rows(nvml_name, key):
    assert gpus.spec_for_name(nvml_name).key == key


def test_seed_ceiling_arithmetic():
    v100 = gpus.spec_for_key("v100-pcie-16gb")
    assert round(v100.bandwidth_gbs / SEED_REFERENCE["weights_gb"], 1) == SEED_REFERENCE["ceiling_tok_s"]


def test_volta_dropped_exactly_where_published():
    no70 = {f"{r.torch}+{r.cuda}" for r in torch_wheels.WHEELS if "7.0" not in r.archs}
    assert {"2.7+12.8", "2.11+12.8", "2.11+13.0", "2.9+13.0"} <= no70
    assert "2.8+12.8" not in no70 and "2.10+12.8" not in no70


def test_the_bundled_examples_stack_is_installable_as_written():
    """exllamav2 >= 0.0.13 requires torch >= 2.2 (issue 24): every example `demo` replays pairs them so; the rule
    itself is shown to catch the old 0.1.8-beside-2.1.2 pairing."""
    import json
    from pathlib import Path

    from packaging.version import Version

    from doctor.knowledge.torch_companions import torch_floor

    assert torch_floor("exllamav2", "0.1.8") is not None and torch_floor("exllamav2", "0.0.12") is None
    examples = sorted((Path(__file__).resolve().parents[3] / "doctor" / "examples").glob("*.json"))
    checked = 0
    for path in examples:
        facts = json.loads(path.read_text())["facts"]
        if facts is None:
            continue
        packages = facts["python"]["packages"]
        exl, torch = packages.get("exllamav2"), packages.get("torch")
        if not (isinstance(exl, str) and isinstance(torch, str)):
            continue
        floor = torch_floor("exllamav2", exl)
        assert floor is None or Version(torch.split("+")[0]) >= Version(floor[0]), (path.name, exl, torch)
        checked += 1
    assert checked >= 5  # the four seed stages and the H200 run
    assert Version("2.1.2") < Version(torch_floor("exllamav2", "0.1.8")[0])  # the pairing the examples used to have
