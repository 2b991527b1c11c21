"""`gpu-present`: an NVIDIA GPU and a working driver are visible through NVML."""

from __future__ import annotations

from dataclasses import fields
from typing import Iterable

from checks.base import Check, CheckContext
from checks.env.cuda_visibility import show_cards_fix, visibility
from checks.prescription.machine import machine_prescription
from checks.prescription.quote import route_fix
from doctor.knowledge.attention import cc_tuple
from doctor.knowledge.cuda import DRIVER_BRANCHES, LAST_LEGACY_BRANCH, LAST_LEGACY_BRANCH_EOL, legacy_architectures
from doctor.knowledge.gpus import spec_for_pci
from doctor.knowledge.hardware import FALLEN_OFF_BUS_SOURCE, GPU_LOST_COMMANDS, GPU_LOST_FIX, NVML_LOST_WORDS
from doctor.knowledge.messages import NVML_STOPPED_COMMANDS, NVML_STOPPED_FIX
from doctor.model.facts import GpuFacts
from doctor.model.findings import Finding, Status
from doctor.model.ids import CheckId
from doctor.model.samples import SampleSeries
from doctor.model.unknown import Maybe, Unknown, known, show

# With no NVIDIA device on the bus a driver is no fix (WSL2 shows no PCI bus: there the host's GPU may still be there)
NO_NVIDIA_DEVICE_FIX = ("Nothing to install here: run the doctor on the machine with the GPU, plan for a card with "
                        "--target-gpu NAME (see --list-gpus), or try `v100-doctor demo`.")


def _fix_for(reason: str, pci: Maybe[tuple[str, ...]] | None = None) -> tuple[str, list[str]]:
    low = reason.lower()
    if "nvidia-ml-py" in low:
        return "Install the NVML bindings the doctor uses.", ["pip install nvidia-ml-py"]
    if "mismatch" in low:
        return ("The loaded kernel module and the user-space driver differ (usually a driver update without a reboot). "
                "Reboot, or reload the nvidia kernel modules.", ["sudo reboot"])
    if "libnvidia-ml" in low or "not loaded" in low:
        return f"No NVIDIA driver is installed or loaded. {_driver_for(pci)}", ["nvidia-smi"]
    return "Check that the GPU is visible: run nvidia-smi, and check CUDA_VISIBLE_DEVICES.", ["nvidia-smi"]


def _driver_for(pci: Maybe[tuple[str, ...]] | None) -> str:
    """Which driver branch to install, for the cards on the PCI bus where they are known, else for the legacy ones."""
    legacy = f"the R{LAST_LEGACY_BRANCH} branch or older (R{LAST_LEGACY_BRANCH} is the last branch that supports " \
             f"{legacy_architectures()})"
    specs = [s for dev in (pci if pci is not None and known(pci) and pci else ()) if (s := spec_for_pci(dev)) is not None]
    if not specs:
        return f"For a V100/P100/P40 install {legacy}."
    names = ", ".join(dict.fromkeys(s.name for s in specs))
    if all(cc_tuple(s.cc) <= (7, 0) for s in specs):  # Maxwell, Pascal, Volta: their last branch
        return f"For the {names} on the PCI bus install {legacy}."
    return f"For the {names} on the PCI bus install a current NVIDIA data-center driver."


def _driver_too_new(driver: Maybe[str], pci: Maybe[tuple[str, ...]]) -> str | None:
    """A driver branch past the last legacy one with NVIDIA cards on the bus that it does not drive."""
    if not known(driver) or not known(pci) or not pci:
        return None
    try:
        branch = int(str(driver).split(".")[0])
    except ValueError:
        return None
    named = [f"{spec.name} ({dev})" if (spec := spec_for_pci(dev)) else dev for dev in pci]
    return (f"driver {driver} sees no GPU, yet {len(pci)} NVIDIA device(s) are on the PCI bus ({', '.join(named)}): "
            f"branches after R{LAST_LEGACY_BRANCH} no longer drive {legacy_architectures('or')} cards (V100, TITAN V, P100, "
            "P40)") if branch > LAST_LEGACY_BRANCH else None


def lost_gpus(gpus: Iterable[GpuFacts], samples: SampleSeries | None = None) -> list[tuple[int, str]]:
    """(index, NVML's words) for each GPU that NVML could not reach with "GPU is lost" or "Unknown Error" (what
    nvidia-smi prints as "Unable to determine the device handle"): from the first call, at any reading after it
    (a GPU lost while the facts were gathered), or while `watch` sampled it (the series' `unavailable`)."""
    lost: dict[int, str] = {}
    for g in gpus:
        reason = next((v.reason for f in fields(g) if isinstance(v := getattr(g, f.name), Unknown) and _lost(v.reason)),
                      None)
        if reason:
            lost[g.index] = reason
    for series in (samples.gpus if samples is not None else ()):
        reason = series.unavailable.get("device", "")
        if _lost(reason) and series.index not in lost:
            lost[series.index] = f"while sampling: {reason}"
    return sorted(lost.items())


def _lost(reason: str) -> bool:
    return any(w.lower() in reason.lower() for w in NVML_LOST_WORDS)


def run(ctx: CheckContext) -> Finding:
    nvml = ctx.facts.nvml
    if not nvml.available or not nvml.gpus:
        reason = nvml.reason or "NVML reports no GPU"
        pci = ctx.facts.host.nvidia_pci_devices
        evidence: dict[str, object] = {"nvml_reason": reason, "driver_version": show(nvml.driver_version),  # unknown: with its reason
                    "nvidia_pci_devices": list(pci) if known(pci) else None}
        too_new = _driver_too_new(nvml.driver_version, pci)
        if ctx.plan.target_gpu and not too_new:  # planning on a machine without a GPU (a laptop, CI) is fine
            return CHECK.finding(Status.SKIP, f"no GPU on this machine ({reason}); planning for --target-gpu "
                                 f"{ctx.plan.target_gpu} from the knowledge base", {**evidence, "planning_target": ctx.plan.target_gpu})
        if too_new:
            rx = machine_prescription(ctx.facts, ctx.plan)
            fix, commands = route_fix(rx) if rx and rx.routes else (
                f"Install the R{LAST_LEGACY_BRANCH} data-center driver (the last branch for these cards: "
                f"{LAST_LEGACY_BRANCH_EOL[0]}) and reboot. Sources: {DRIVER_BRANCHES[0].source} ; {LAST_LEGACY_BRANCH_EOL[1]}", [])
            return CHECK.finding(Status.FAIL, too_new, evidence, fix, commands)
        if known(pci) and not pci and ctx.facts.host.wsl is not True:  # the bus was read: no NVIDIA device at all
            return CHECK.finding(Status.FAIL, "No NVIDIA GPU on this machine: no NVIDIA device on the PCI bus, so no "
                                 f"driver can help ({reason})", evidence, NO_NVIDIA_DEVICE_FIX, [])
        fix, commands = _fix_for(reason, pci)
        return CHECK.finding(Status.FAIL, f"No usable NVIDIA GPU: {reason}", evidence, fix, commands)
    lost = lost_gpus(nvml.gpus, ctx.facts.samples)
    if lost:
        which = "; ".join(f"GPU {i}: {reason}" for i, reason in lost)
        return CHECK.finding(Status.FAIL, f"{len(lost)} of {len(nvml.gpus)} GPU(s) no longer answer NVML ({which}): the card "
                             "fell off the bus or lost power, a hardware fault", {
                                 "gpu_count": len(nvml.gpus), "lost_gpus": [i for i, _ in lost],
                                 "nvml_errors": [r for _, r in lost], "source": FALLEN_OFF_BUS_SOURCE},
                             GPU_LOST_FIX, list(GPU_LOST_COMMANDS))
    series = ctx.facts.samples
    if series is not None and series.nvml_stopped:  # NVML hung or crashed at a tick of watch's window
        return CHECK.finding(Status.FAIL, f"The driver failed while the GPU was sampled: {series.nvml_stopped}",
                             {"gpu_count": len(nvml.gpus), "nvml_stopped": series.nvml_stopped,
                              "samples": [len(g.samples) for g in series.gpus]},
                             NVML_STOPPED_FIX, list(NVML_STOPPED_COMMANDS))
    vis = visibility(ctx.facts)
    if vis is not None and vis.hides_all:
        fix, commands = show_cards_fix(vis.hidden, ctx.facts)
        return CHECK.finding(Status.FAIL, f"NVML sees {len(nvml.gpus)} GPU(s), but CUDA_VISIBLE_DEVICES={vis.value!r} hides "
                             f"every one ({vis.hidden_text()}): torch and every engine here see no CUDA device",
                             {"gpu_count": len(nvml.gpus), **vis.evidence(),
                              "torch_device_count": ctx.facts.python.torch.device_count
                              if known(ctx.facts.python.torch.device_count) else None}, fix, commands)
    gpu = ctx.target_gpu()
    if gpu is None:
        return CHECK.finding(Status.FAIL, f"GPU index {ctx.plan.gpu_index} does not exist ({len(nvml.gpus)} GPU(s) visible)",
                             {"gpu_count": len(nvml.gpus)}, "Pick an index that nvidia-smi lists.", ["nvidia-smi -L"])
    names = [show(g.name) for g in nvml.gpus]
    evidence = {
        "gpu_count": len(nvml.gpus), "gpus": names, "driver_version": show(nvml.driver_version),
        "cuda_driver_version": show(nvml.cuda_driver_version),
        "memory_total_mib": gpu.memory_total_mib if known(gpu.memory_total_mib) else None,
    }
    return CHECK.finding(Status.PASS, f"{len(nvml.gpus)} GPU(s): {', '.join(names)}; driver {show(nvml.driver_version)} "
                         f"(supports CUDA up to {show(nvml.cuda_driver_version)})", evidence)


CHECK = Check(id=CheckId("gpu-present"), title="NVIDIA GPU and driver", run=run, order=10)
