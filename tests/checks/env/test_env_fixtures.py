"""Every machine fixture, replayed through the real CLI, gives the expected verdict per check, with evidence."""

from __future__ import annotations

import json

import pytest
from conftest import MACHINES, run_cli

# fixture -> {check id: (status, {evidence key: expected value})}
EXPECTED = {
    "v100-pcie-16gb-healthy": {
        "gpu-present": ("pass", {"gpu_count": 1, "driver_version": "535.183.01"}),
        "compute-capability": ("pass", {"cc": "7.0", "sm": "sm_70", "bf16_native": False, "fp8_native": False,
                                        "bandwidth_gbs": 900}),
        "cuda-pairing": ("pass", {"torch_version": "2.1.2+cu121", "driver_runs_torch_cuda": "toolkit"}),
        "flash-attn": ("pass", {"flash_attn": None}),
    },
    "v100-torch-2.11-cu130": {
        "compute-capability": ("pass", {"sm": "sm_70", "last_driver_branch": 580}),
        "cuda-pairing": ("fail", {"torch_cuda": "13.0", "torch_cubins": ["7.5", "8.0", "8.6", "9.0", "10.0", "12.0"],
                                  "recommended_torch": "2.11.0+cu126"}),
    },
    "v100-torch-2.7.1-cu128": {
        "cuda-pairing": ("fail", {"torch_version": "2.7.1+cu128", "torch_ptx": ["12.0"]}),
    },
    "v100-flash-attn-2": {
        "cuda-pairing": ("pass", {}),
        "flash-attn": ("fail", {"flash_attn": "2.6.3", "min_cc": "8.0", "cc": "7.0", "exllamav2_attention_after_fix": "torch SDPA"}),
    },
    "v100-driver-590": {
        "gpu-present": ("fail", {"driver_version": "590.44.01", "nvidia_pci_devices": ["0000:3b:00.0 10de:1db4"]}),
        "compute-capability": ("skip", {"needs": "gpu-present"}),
        "cuda-pairing": ("skip", {"needs": "gpu-present"}),
    },
    "p40-torch-cu126": {
        "compute-capability": ("warn", {"cc": "6.1", "bandwidth_gbs": 346, "triton": False}),
        "cuda-pairing": ("pass", {"torch_cubins": ["5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"]}),
    },
    "t4-flash-attn-2": {
        "compute-capability": ("pass", {"cc": "7.5", "architecture": "Turing"}),
        "flash-attn": ("fail", {"generation": 2, "cc": "7.5"}),
    },
    "h200-live": {  # recorded on the real H200 by the live gatherer
        "gpu-present": ("pass", {"gpus": ["NVIDIA H200"], "driver_version": "580.159.04"}),
        "compute-capability": ("pass", {"sm": "sm_90", "bf16_native": True, "fp8_native": True}),
        "cuda-pairing": ("pass", {"torch_version": "2.11.0+cu130", "arch_list_from": "torch.cuda.get_arch_list()"}),
        "flash-attn": ("pass", {}),
    },
    "no-nvml": {
        "gpu-present": ("fail", {}),
        "flash-attn": ("skip", {"needs": "compute-capability"}),
    },
}
CLI_REPLAYED = sorted(EXPECTED)  # replayed through the real CLI (a child process each)
# issue 11: one fixture per defect class of the prescription, replayed in-process (the CLI path is covered above)
EXPECTED.update({
    "v100-r470-torch-2.5.1-cu124": {"cuda-pairing": ("fail", {"driver_runs_torch_cuda": "no", "recommended_torch": "2.5.1+cu118",
                                                              "routes": ["change the CUDA variant of torch", "upgrade the driver"]}),
                                    "exllamav2-ready": ("fail", {"probe_can_run": False})},
    "v100-torch-2.10-cu126-nvcc-13": {"cuda-pairing": ("warn", {"problem_kinds": ["nvcc_cannot_target", "nvcc_major_mismatch"],
                                                                "routes": ["fix the toolchain"]}),
                                      "exllamav2-ready": ("fail", {"probe_can_run": False})},
    "titan-v-torch-2.11-cu128": {"cuda-pairing": ("fail", {"recommended_torch": "2.11.0+cu126"}),
                                 "exllamav2-ready": ("fail", {"probe_can_run": False})},
    "p100-torch-2.8-cu128": {"compute-capability": ("pass", {"cc": "6.0", "bandwidth_gbs": 732, "triton": False}),
                             "cuda-pairing": ("fail", {"recommended_torch": "2.8.0+cu126"}),
                             "exllamav2-ready": ("fail", {"probe_can_run": False})},
    "v100-torch-2.7.1-cu128-companions": {"cuda-pairing": ("fail", {"recommended_torch": "2.7.1+cu126"})},
    "v100-sxm2-hw-power-brake": {"thermal": ("fail", {"form_factor": "sxm", "temperature_c": 60}),
                                 "cuda-pairing": ("pass", {})},
    "v100-pcie-hw-thermal-slowdown": {"thermal": ("fail", {"form_factor": "pcie", "temperature_c": 88})},
    "p100-12gb-torch-2.6-cu126": {"compute-capability": ("pass", {"cc": "6.0", "bandwidth_gbs": 549, "triton": False}),
                                  "cuda-pairing": ("pass", {}), "exllamav2-ready": ("pass", {"probe_can_run": True})},
    "rtx-2080-ti-flash-attn-2": {"compute-capability": ("pass", {"cc": "7.5", "bandwidth_gbs": 616}),
                                 "flash-attn": ("fail", {"cc": "7.5", "min_cc": "8.0"})},
    "t4-torch-2.11-cu130-healthy": {"cuda-pairing": ("pass", {"torch_cuda": "13.0"}), "exllamav2-ready": ("pass", {})},
    "v100-r580-torch-2.11-cu126-healthy": {"cuda-pairing": ("pass", {"torch_version": "2.11.0+cu126"}),
                                           "exllamav2-ready": ("pass", {})},
    "p40-r470-torch-2.1-cu121": {"cuda-pairing": ("fail", {"recommended_torch": "2.1.2+cu118",
                                                           "routes": ["change the CUDA variant of torch", "upgrade the driver"]})},
    "v100-sxm2-driver-590": {"gpu-present": ("fail", {"driver_version": "590.44.01"}), "cuda-pairing": ("skip", {})},
    "v100-torch-cpu-only": {"cuda-pairing": ("fail", {"recommended_torch": "2.5.1+cu124"}),
                            "exllamav2-ready": ("fail", {"probe_can_run": False})},
    "v100-nvcc-11.8-torch-cu121": {"cuda-pairing": ("warn", {"problem_kinds": ["nvcc_major_mismatch"]})},
    # several GPUs (issue 15): host-wide findings here, per-GPU ones and exit codes in tests/checks/multi_gpu/
    "mixed-2080ti-v100": {"cuda-pairing": ("pass", {"cc": "7.5"}), "gpu-numbering": ("pass", {})},
    "v100-sxm2-4x-nvlink": {"gpu-topology": ("pass", {"without_p2p": []})},
    "dgx1-8x-v100": {"gpu-topology": ("info", {})},
    "cuda-visible-uuids": {"gpu-numbering": ("info", {"hidden_from_cuda": []})},
    "mig-a100-beside-v100s": {"gpu-numbering": ("warn", {"mig_cards": "NVML 0 NVIDIA A100-PCIE-40GB"})},
    "h200-live-per-gpu": {"gpu-present": ("pass", {"gpus": ["NVIDIA H200"]}), "cuda-pairing": ("pass", {})},  # recorded live
    # the machines people really have (issue 24): tests/checks/env/test_field_machines.py judges them whole
    "v100-ngc-compat-r470-healthy": {"cuda-pairing": ("pass", {"forward_compat_cuda": "12.4", "kernel_driver": "470.239.06",
                                                               "torch_initialised_cuda": True}),
                                     "exllamav2-ready": ("pass", {"probe_can_run": True})},
    "rtx-2080-ti-ngc-compat-804": {"cuda-pairing": ("fail", {"forward_compat_supported_card": False,
                                                             "torch_initialised_cuda": False}),
                                   "exllamav2-ready": ("fail", {"probe_can_run": False})},
    "v100-cuda-visible-hides-only-gpu": {"gpu-present": ("fail", {"cuda_visible_devices": "1", "hidden_nvml": [0],
                                                                  "torch_device_count": 0}),
                                         "exllamav2-ready": ("skip", {"needs": "gpu-present"})},
    "v100-2x-cuda-visible-hides-one": {"gpu-present": ("pass", {"gpu_count": 2}),
                                       "gpu-numbering": ("pass", {"hidden_from_cuda": ["NVML 1 Tesla V100-PCIE-16GB"]})},
    "t4-at-board-power-limit-healthy": {"thermal": ("pass", {"power_limit_w": 70.0, "power_default_limit_w": 70.0,
                                                             "mem_clock_ratio": 1.0})},
    "t4-power-limit-lowered": {"thermal": ("warn", {"power_limit_w": 60.0, "power_default_limit_w": 70.0})},
    "titan-v-wsl2-healthy": {"gpu-processes": ("info", {"wsl": True})},
    "v100-torch-rocm": {"cuda-pairing": ("fail", {"problem_kinds": ["torch_rocm"]}),
                        "exllamav2-ready": ("fail", {"probe_can_run": False})},
})
EXIT = {"v100-pcie-16gb-healthy": 0, "p40-torch-cu126": 1, "h200-live": 0}


def test_every_fixture_has_expectations():
    names = {p.stem for p in MACHINES.glob("*.json")}
    assert set(EXPECTED) <= names
    assert names == set(EXPECTED)


@pytest.mark.parametrize("name", CLI_REPLAYED)
def test_replay_verdicts(name, validate):
    proc = run_cli("--replay", str(MACHINES / f"{name}.json"), "--json")
    report = validate(json.loads(proc.stdout))
    assert proc.returncode == EXIT.get(name, 2), proc.stderr
    _expect(name, report)


@pytest.mark.parametrize("name", sorted(set(EXPECTED) - set(CLI_REPLAYED)))
def test_replay_verdicts_in_process(name, validate):
    from doctor.facts.replay import load_document
    from doctor.model.report import report_to_dict
    from doctor.model.source import replayed
    from doctor.run.pipeline import diagnose

    doc = load_document(str(MACHINES / f"{name}.json"))
    report = validate(json.loads(json.dumps(report_to_dict(diagnose(doc.plan, doc.facts, source=replayed(f"{name}.json"))))))
    _expect(name, report)


def _expect(name: str, report: dict) -> None:
    findings = {f["id"]: f for f in report["findings"]}
    for check_id, (status, evidence) in EXPECTED[name].items():
        f = findings[check_id]
        assert f["status"] == status, (check_id, f["summary"])
        for key, value in evidence.items():
            assert f["evidence"].get(key) == value, (check_id, key, f["evidence"].get(key))
        if status in ("fail", "warn"):
            assert f["fix"], f"{check_id} fails without a fix"
    assert report["source"].startswith("replay:")


def test_driver_590_fix_names_r580():
    report = json.loads(run_cli("--replay", str(MACHINES / "v100-driver-590.json"), "--json").stdout)
    gpu = report["findings"][0]
    assert "R580" in gpu["fix"] and "no longer drive" in gpu["summary"]


def test_cu130_fix_is_a_command_that_fits_the_card():
    report = json.loads(run_cli("--replay", str(MACHINES / "v100-torch-2.11-cu130.json"), "--json").stdout)
    pairing = next(f for f in report["findings"] if f["id"] == "cuda-pairing")
    assert any("download.pytorch.org/whl/cu126" in c for c in pairing["commands"])
    assert "compute_70" in pairing["summary"]  # nvcc 13 cannot build ExLlamaV2 for the card either
