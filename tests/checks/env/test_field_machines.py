"""The machines people really have (issue 24), each judged whole: a forward-compatibility container, a board at its
own power limit and WSL2 give no warning; a card hidden by CUDA_VISIBLE_DEVICES lets no check pass and no split use
it; forward compatibility on a GeForce card and a ROCm torch are named for what they are. The fixtures and their
sources: fixtures/machines/make_field_machines.py."""

from __future__ import annotations

from dataclasses import replace

import pytest
from conftest import MACHINES

from doctor.facts.replay import load_document
from doctor.model.findings import Status
from doctor.model.plan import Plan
from doctor.model.source import replayed
from doctor.run.pipeline import diagnose

HEALTHY = ("v100-ngc-compat-r470-healthy", "t4-at-board-power-limit-healthy", "titan-v-wsl2-healthy")


def report(name: str, plan: Plan | None = None):
    doc = load_document(str(MACHINES / f"{name}.json"))
    return diagnose(plan or doc.plan, doc.facts, source=replayed(f"{name}.json"))


def findings(name: str, plan: Plan | None = None) -> dict:
    return {f.id: f for f in report(name, plan).findings}


@pytest.mark.parametrize("name", HEALTHY)
def test_a_healthy_machine_of_each_class_reports_no_warning(name):
    bad = {f.id: f.summary for f in report(name).findings if f.status in (Status.WARN, Status.FAIL, Status.ERROR)}
    assert bad == {}


def test_forward_compatibility_is_judged_from_what_torch_did():
    pairing = findings("v100-ngc-compat-r470-healthy")["cuda-pairing"]
    assert "forward compatibility" in pairing.summary and "470.239.06" in pairing.summary
    assert pairing.evidence["compat_libcuda"] == "/usr/local/cuda-12.4/compat/libcuda.so.550.54.14"
    assert (pairing.evidence["container"], pairing.evidence["nvidia_visible_devices"]) == ("docker", "all")
    # the same machine where torch could not start CUDA: the old driver is a fault again
    doc = load_document(str(MACHINES / "v100-ngc-compat-r470-healthy.json"))
    torch = replace(doc.facts.python.torch, cuda_available=False, device_count=0)
    failed = diagnose(doc.plan, replace(doc.facts, python=replace(doc.facts.python, torch=torch)), source=replayed("x"))
    assert {f.id: f.status for f in failed.findings}["cuda-pairing"] == Status.FAIL


def test_forward_compatibility_on_a_geforce_card_names_error_804():
    f = findings("rtx-2080-ti-ngc-compat-804")
    assert f["cuda-pairing"].status == Status.FAIL and "error 804" in f["cuda-pairing"].summary
    assert "data-centre GPUs only" in f["cuda-pairing"].summary


def test_no_check_passes_when_cuda_visible_devices_hides_the_only_card():
    f = findings("v100-cuda-visible-hides-only-gpu")
    assert [i for i, x in f.items() if x.status == Status.PASS] == []
    present = f["gpu-present"]
    assert present.status == Status.FAIL and "CUDA_VISIBLE_DEVICES='1'" in present.summary
    assert "CUDA_VISIBLE_DEVICES" in present.fix and "unset CUDA_VISIBLE_DEVICES" in present.commands


def test_no_split_plan_uses_a_hidden_card():
    f = findings("v100-2x-cuda-visible-hides-one", Plan(gpu_split=(8.0, 8.0)))
    numbering = f["gpu-numbering"]
    assert numbering.status == Status.FAIL and "NVML 1" in numbering.summary and "CUDA_VISIBLE_DEVICES" in numbering.fix
    # a split over the one visible card is fine, and an unset variable hides nothing
    assert findings("v100-2x-cuda-visible-hides-one", Plan(gpu_split=(14.0,)))["gpu-numbering"].status != Status.FAIL
    assert findings("cuda-visible-uuids", Plan(gpu_split=(8.0, 8.0)))["gpu-numbering"].status != Status.FAIL


def test_torch_that_sees_no_device_never_passes_cuda_pairing():
    """Without CUDA_VISIBLE_DEVICES to blame: torch (a CUDA build, right driver) recorded 0 devices."""
    doc = load_document(str(MACHINES / "v100-pcie-16gb-healthy.json"))
    torch = replace(doc.facts.python.torch, cuda_available=False, device_count=0, device_capabilities=())
    f = {x.id: x for x in diagnose(doc.plan, replace(doc.facts, python=replace(doc.facts.python, torch=torch)),
                                   source=replayed("x")).findings}
    assert f["cuda-pairing"].status == Status.FAIL and "sees no CUDA device" in f["cuda-pairing"].summary
    assert f["exllamav2-ready"].status == Status.FAIL


def test_a_lowered_power_limit_still_warns_and_the_board_limit_is_explained():
    lowered = findings("t4-power-limit-lowered")["thermal"]
    assert lowered.status == Status.WARN and "below the default 70 W" in lowered.summary
    at_limit = findings("t4-at-board-power-limit-healthy")["thermal"]
    assert at_limit.status == Status.PASS and "board's own limit" in at_limit.summary


def test_wsl2_explains_the_missing_process_list_instead_of_sudo():
    processes = findings("titan-v-wsl2-healthy")["gpu-processes"]
    assert processes.status == Status.INFO and "WSL2" in processes.summary
    assert not any("sudo" in c for c in processes.commands)


def test_a_rocm_torch_is_named_rocm_not_cpu_only():
    f = findings("v100-torch-rocm")
    assert "ROCm 6.2 build" in f["cuda-pairing"].summary and "CPU-only" not in f["cuda-pairing"].summary
    assert "ROCm 6.2 build" in f["exllamav2-ready"].summary
