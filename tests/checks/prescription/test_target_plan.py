"""Issue 23: --target-gpu plans. The card is a planning target: what it will need (torch builds with its kernels,
the driver branch, the nvcc major) is printed as a plan; this machine's software is neither judged nor prescribed
for, and on a machine without a GPU or torch the output holds no change to this machine."""

from __future__ import annotations

import json

import pytest
from conftest import MACHINES, ROOT, run_cli

from checks.prescription.target import target_plan, torch_builds

MODEL = str(ROOT / "fixtures" / "models" / "gemma-3-27b-it")


def no_gpu_no_torch(tmp_path):
    """A laptop: no NVML, no torch, nvcc 13 on the PATH (the fixture without NVML, its torch taken away)."""
    doc = json.loads((MACHINES / "no-nvml.json").read_text())
    doc["facts"]["python"]["torch"] = {"installed": False, "reason": "not installed"}
    doc["facts"]["python"]["packages"]["torch"] = {"unknown": "not installed"}
    doc["facts"]["python"]["nvcc"] = {"path": "/usr/local/cuda/bin/nvcc", "version": "13.0", "cuda_home": "/usr/local/cuda"}
    path = tmp_path / "laptop.json"
    path.write_text(json.dumps(doc))
    return path


def route_lines(out: str) -> list[str]:
    start = out.index("What the target will need")
    return [line.strip() for line in out[start:].split("\n\n", 1)[0].splitlines()[1:]]


@pytest.mark.parametrize("face", ["--no-tui", "--markdown"])
def test_on_a_laptop_the_plan_is_the_targets_and_prints_no_change_to_this_machine(tmp_path, face):
    out = run_cli("--replay", str(no_gpu_no_torch(tmp_path)), "--target-gpu", "v100-pcie-16gb", "--model", MODEL,
                  face).stdout
    assert "torch no torch" not in out and "nvcc 13.0 ->" not in out and "runs on this driver" not in out
    if face == "--no-tui":
        lines = route_lines(out)
        assert lines and all(line.startswith("#") for line in lines), lines  # comments only: nothing to run here
        assert any("cu126" in line for line in lines) and any("R580" in line for line in lines)
        assert any("12.x" in line for line in lines)
        assert "[i] cuda-pairing: planning for Tesla V100 PCIe 16 GB" in out
        assert "[i] flash-attn: planning for Tesla V100 PCIe 16 GB" in out
    else:
        assert "#### What the target will need" in out and "#### Do this, in this order" not in out


def test_a_live_run_here_with_target_gpu_prints_no_command_for_this_machine():
    out = run_cli("--target-gpu", "v100-pcie-16gb", "--model", MODEL, "--no-tui", timeout=120).stdout
    assert all(line.startswith("#") for line in route_lines(out))


def test_without_target_gpu_the_machine_still_gets_its_route():
    out = run_cli("--replay", str(MACHINES / "v100-torch-2.11-cu130.json"), "--no-tui").stdout
    assert "Do this, in this order:" in out and "pip install" in out  # the plan above is only for --target-gpu


def test_the_plan_names_torch_builds_that_hold_the_cards_kernels():
    assert [f"{r.torch}+{r.cuda}" for r in torch_builds("7.0")][0] == "2.14+12.6"
    assert all("7.0" in r.archs for r in torch_builds("7.0"))
    assert all(r.cuda != "13.0" for r in torch_builds("6.1"))  # CUDA 13 builds have no Pascal kernels
    plan = target_plan("7.0", "Tesla V100 PCIe 16 GB")
    steps = plan.routes[0].steps
    assert [s.kind for s in steps] == ["torch", "driver", "toolkit"] and not any(s.command for s in steps)
    assert steps[1].driver_branch == 580 and steps[2].cuda_major == 12
