"""The form factor comes from what NVML reports (the name's marks, then the board's default power limit), or is
unknown: never guessed from the absence of "SXM" (issue 39: the 700 W "NVIDIA H200" was called a PCIe card)."""

from __future__ import annotations

import json

import pytest
from conftest import MACHINES, run_cli

from doctor.knowledge.throttle import REASONS, form_factor, reason_fix


@pytest.mark.parametrize("name,power,kind", [
    ("NVIDIA H200", 700.0, "sxm"), ("NVIDIA H200", None, "sxm"), ("NVIDIA H200 NVL", 600.0, "pcie"),
    ("Tesla V100-SXM2-16GB", 300.0, "sxm"), ("Tesla V100-PCIE-16GB", 250.0, "pcie"), ("NVIDIA H100 PCIe", 350.0, "pcie"),
    ("NVIDIA H100 80GB HBM3", 700.0, "sxm"), ("NVIDIA A100-SXM4-80GB", 400.0, "sxm"), ("NVIDIA A100 80GB HBM2e", 400.0, "unknown"),
    ("NVIDIA A10", 150.0, "pcie"), ("Tesla T4", 70.0, "pcie"), ("NVIDIA GeForce RTX 5090", 575.0, "pcie"),
    ("NVIDIA TITAN V", 250.0, "pcie"), ("NVIDIA B300", 1100.0, "sxm"), ("Some Future GPU", None, "unknown"),
    ("Some Future GPU", 300.0, "unknown"),
])
def test_form_factor(name, power, kind):
    assert form_factor(name, power) == kind


def test_unknown_form_factor_gives_both_fixes():
    r = REASONS["hw_thermal_slowdown"]
    fix = reason_fix("hw_thermal_slowdown", "Some Future GPU")
    assert r.fix_pcie in fix and r.fix_sxm in fix


def test_the_h200_report_says_sxm():
    proc = run_cli("--replay", str(MACHINES / "h200-live-per-gpu.json"), "--json")
    doc = json.loads(proc.stdout)
    thermal = [f for g in doc.get("gpus") or [] for f in g["findings"] if f["id"] == "thermal"]
    thermal += [f for f in doc["findings"] if f["id"] == "thermal"]
    assert thermal and all(f["evidence"].get("form_factor") == "sxm" for f in thermal if "form_factor" in f["evidence"])
    assert any("form_factor" in f["evidence"] for f in thermal)
