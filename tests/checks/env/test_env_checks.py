"""Environment checks called directly on edited facts: the cases no fixture covers."""

from __future__ import annotations

from dataclasses import replace

import pytest
from conftest import MACHINES

from checks.base import CheckContext
from checks.env.cuda_pairing import CHECK as PAIRING
from checks.env.flash_attn import CHECK as FLASH
from checks.prescription.compat import driver_runs_cuda
from checks.prescription.route import prescribe
from doctor.facts.replay import load_document
from doctor.knowledge.torch_wheels import arch_list_to_ccs, cubin_runs, ptx_runs
from doctor.model.findings import Status
from doctor.model.plan import Plan
from doctor.model.unknown import Unknown

HEALTHY = load_document(str(MACHINES / "v100-pcie-16gb-healthy.json")).facts


def with_torch(facts, **kw):
    return replace(facts, python=replace(facts.python, torch=replace(facts.python.torch, **kw)))


def with_driver(facts, driver, cuda):
    return replace(facts, nvml=replace(facts.nvml, driver_version=driver, cuda_driver_version=cuda))


def ctx(facts):
    return CheckContext(facts=facts, plan=Plan())


def test_binary_rule():
    assert cubin_runs("6.0", "6.1") and cubin_runs("7.0", "7.5")
    assert not cubin_runs("7.5", "7.0") and not cubin_runs("6.0", "7.0")
    assert ptx_runs("7.0", "9.0") and not ptx_runs("12.0", "7.0")
    assert arch_list_to_ccs(("sm_70", "sm_90a", "compute_120")) == (("7.0", "9.0"), ("12.0",))


def test_driver_too_old_for_torch_cuda_fails():
    facts = with_driver(with_torch(HEALTHY, version="2.5.1+cu124", cuda="12.4"), "470.256.02", "11.4")
    f = PAIRING.run(ctx(facts))
    assert f.status is Status.FAIL
    assert f.evidence["driver_runs_torch_cuda"] == "no"
    assert "too old" in f.summary


def test_minor_version_compatibility_passes_with_a_note():
    f = PAIRING.run(ctx(with_driver(with_torch(HEALTHY, version="2.8.0+cu128", cuda="12.8",
                                               arch_list=Unknown("not reported")), "535.183.01", "12.2")))
    assert f.status is Status.PASS
    assert f.evidence["driver_runs_torch_cuda"] == "mvc"
    assert f.evidence["arch_list_from"].startswith("knowledge base (not measured here)")


def test_cpu_only_torch_fails():
    f = PAIRING.run(ctx(with_torch(HEALTHY, version="2.4.0+cpu", cuda="none", arch_list=())))
    assert f.status is Status.FAIL and "CPU-only" in f.summary


def test_broken_torch_fails_with_reason():
    facts = replace(HEALTHY, python=replace(HEALTHY.python, torch=replace(
        HEALTHY.python.torch, version=Unknown("x"), reason="torch could not be inspected: timed out after 20 s")))
    f = PAIRING.run(ctx(facts))
    assert f.status is Status.FAIL and "timed out" in f.summary


def test_ptx_only_wheel_warns():
    f = PAIRING.run(ctx(with_torch(HEALTHY, arch_list=("sm_80", "compute_60"))))
    assert f.status is Status.WARN and "only PTX" in f.summary


def test_nvcc_major_mismatch_warns_for_jit_builds():
    facts = replace(HEALTHY, python=replace(HEALTHY.python, nvcc=replace(HEALTHY.python.nvcc, version="11.8")))
    f = PAIRING.run(ctx(facts))
    assert f.status is Status.WARN and "mismatches" in f.summary
    assert f.evidence["nvcc_version"] == "11.8"


def test_route_picks_a_wheel_with_a_cubin_for_the_card_and_respects_driver():
    rx = prescribe(HEALTHY, "6.1", "Tesla P40")  # torch 2.1.2+cu121 on a P40: has sm_60, so nothing to change
    assert not rx.routes
    assert driver_runs_cuda("520.61.05", "11.8") == "toolkit"
    assert driver_runs_cuda("535.183.01", "12.6") == "mvc"
    assert driver_runs_cuda("470.1", "12.1") is None


def test_flash_attn_disabled_by_env_warns():
    facts = replace(HEALTHY, python=replace(HEALTHY.python, packages={**HEALTHY.python.packages, "flash-attn": "2.6.3"},
                                            env={"EXLLAMA_NO_FLASH_ATTN": "1"}))
    f = FLASH.run(ctx(facts))
    assert f.status is Status.WARN and f.evidence["generation"] == 2


def test_flash_attn_on_ampere_passes():
    gpu = replace(HEALTHY.nvml.gpus[0], name="NVIDIA A100-SXM4-40GB", compute_capability="8.0")
    facts = replace(HEALTHY, nvml=replace(HEALTHY.nvml, gpus=(gpu,)),
                    python=replace(HEALTHY.python, packages={**HEALTHY.python.packages, "flash-attn": "2.6.3"}))
    f = FLASH.run(ctx(facts))
    assert f.status is Status.PASS and f.evidence["exllamav2_attention"] == "flash-attn"


def test_compute_capability_judges_the_planned_card_without_a_gpu():
    from checks.env.compute_capability import CHECK as CC

    no_gpu = load_document(str(MACHINES / "no-nvml.json")).facts
    f = CC.run(CheckContext(facts=no_gpu, plan=Plan(target_gpu="p40")))
    assert f.status is Status.WARN  # the P40's 1:64 FP16
    assert f.evidence["planned_for"] == "Tesla P40 24 GB" and f.evidence["sm"] == "sm_61"
    assert f.summary.startswith("planning for Tesla P40")
    assert CC.run(CheckContext(facts=no_gpu, plan=Plan())).status is Status.SKIP


def with_gpu(facts, **kw):
    return replace(facts, nvml=replace(facts.nvml, gpus=(replace(facts.nvml.gpus[0], **kw),)))


def test_a_gpu_whose_handle_nvml_lost_fails_gpu_present_as_a_hardware_fault():
    from checks.env.gpu_present import CHECK as GPU

    for words in ("nvmlDeviceGetHandleByIndex: Unknown Error", "nvmlDeviceGetMemoryInfo: GPU is lost"):
        f = GPU.run(ctx(with_gpu(HEALTHY, name=Unknown(words), memory_total_mib=Unknown(words))))
        assert f.status is Status.FAIL, words
        assert f.evidence["lost_gpus"] == [0] and f.evidence["nvml_errors"] == [words]
        assert "hardware" in f.summary and "power delivery" in f.fix and any("xid" in c for c in f.commands)


def test_a_gpu_field_nvml_does_not_support_is_not_a_lost_gpu():
    from checks.env.gpu_present import CHECK as GPU

    f = GPU.run(ctx(with_gpu(HEALTHY, memory_total_mib=Unknown("nvmlDeviceGetMemoryInfo: Not Supported"))))
    assert f.status is Status.PASS


def test_compute_capability_notes_tritons_minimum_without_warning_and_warns_only_for_real_faults():
    from checks.env.compute_capability import CHECK as CC

    v100 = CC.run(ctx(HEALTHY))
    assert v100.status is Status.PASS and v100.evidence["triton"] is True
    p100 = CC.run(ctx(with_gpu(HEALTHY, name="Tesla P100-PCIE-16GB", compute_capability="6.0")))
    assert p100.status is Status.PASS and p100.evidence["triton"] is False  # ExLlamaV2 does not use Triton
    assert p100.evidence["triton_min_cc"] == "7.0" and "--enforce-eager" in p100.fix and "Triton" in p100.summary
    p40 = CC.run(ctx(with_gpu(HEALTHY, name="Tesla P40", compute_capability="6.1")))
    assert p40.status is Status.WARN and "1:64" in p40.summary and "--enforce-eager" in p40.fix


def test_no_nvidia_device_on_the_bus_says_so_and_prescribes_no_driver():
    """Issue 39: a host with no NVIDIA PCI device at all was told to install R580."""
    from checks.env.gpu_present import CHECK as GPU

    bare = load_document(str(MACHINES / "no-nvml.json")).facts
    for pci, wsl, no_device in (((), False, True), ((), True, False), (Unknown("not read"), False, False),
                                (("0000:3b:00.0 10de:1db4",), False, False)):
        facts = replace(bare, host=replace(bare.host, nvidia_pci_devices=pci, wsl=wsl))
        f = GPU.run(ctx(facts))
        assert f.status is Status.FAIL
        if no_device:
            assert f.summary.startswith("No NVIDIA GPU on this machine: no NVIDIA device on the PCI bus")
            assert "R580" not in f.fix and "driver" not in f.fix.lower() and not f.commands
        else:  # WSL2 shows no PCI bus, an unread bus says nothing, a card on the bus needs its driver
            assert "No NVIDIA GPU on this machine" not in f.summary


def test_one_driver_rule_for_the_live_check_and_every_prescription():
    """Issue 39: the route asked for R560 for a cu126 wheel while the live check accepted 550 (minor-version
    compatibility). The floor every prescription names is the lowest driver the live check accepts."""
    from packaging.version import Version

    from checks.prescription.compat import driver_floor
    from doctor.knowledge.cuda import TOOLKIT_DRIVER

    for cuda, _, _ in TOOLKIT_DRIVER:
        version, how, source = driver_floor(cuda)
        assert driver_runs_cuda(version, cuda) is not None and source.startswith("https://"), cuda
        below = Version(version)
        just_below = f"{below.major}.{below.minor - 1}" if below.minor else f"{below.major - 1}.99"
        assert driver_runs_cuda(just_below, cuda) is None, cuda
    assert driver_floor("12.6")[0] == "525.60.13" and driver_runs_cuda("550.54.15", "12.6") == "mvc"


def test_flash_attn_with_no_engine_found_speaks_for_each_engine_not_exllamav2_alone():
    doc = load_document(str(MACHINES / "engine-hosts" / "v100-no-engine-no-torch.json"))
    ctx = CheckContext(doc.facts, doc.plan)
    assert ctx.engine.assumed
    f = FLASH.run(ctx)
    assert f.status is Status.PASS and f.evidence["engine_assumed"] is True
    assert "llama.cpp, Ollama and vLLM do not call it" in f.summary and "ExLlamaV2 would use" in f.summary
    named = load_document(str(MACHINES / "v100-pcie-16gb-healthy.json"))
    g = FLASH.run(CheckContext(named.facts, named.plan))
    assert not CheckContext(named.facts, named.plan).engine.assumed and "do not call it" not in g.summary


@pytest.mark.parametrize("pci, says, not_says", [
    (("0000:3b:00.0 10de:1db4",), "For the Tesla V100 PCIe 16 GB on the PCI bus install the R580 branch", "V100/P100/P40"),
    (("0000:3b:00.0 10de:1eb8",), "For the Tesla T4 16 GB on the PCI bus install a current", "R580"),
    (Unknown("not read"), "For a V100/P100/P40 install the R580 branch", "PCI bus"),
])
def test_no_driver_names_the_card_on_the_bus_not_an_example_card(pci, says, not_says):
    """Issue 35 item 6: a fix where the card is known names that card ("such as the V100" only where it is not)."""
    from checks.env.gpu_present import CHECK as GPU

    bare = load_document(str(MACHINES / "no-nvml.json")).facts
    f = GPU.run(ctx(replace(bare, host=replace(bare.host, nvidia_pci_devices=pci, wsl=False))))
    assert f.status is Status.FAIL and says in f.fix and not_says not in f.fix
