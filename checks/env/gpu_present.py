"""`gpu-present`: an NVIDIA GPU and a working driver are visible through NVML."""

from __future__ import annotations

from checks.base import Check, CheckContext
from doctor.findings import Finding, Status
from doctor.unknown import known, show


def _fix_for(reason: str) -> tuple[str, list[str]]:
    low = reason.lower()
    if "nvidia-ml-py" in low:
        return "Install the NVML bindings the doctor uses.", ["pip install nvidia-ml-py"]
    if "mismatch" in low:
        return ("The loaded kernel module and the user-space driver differ (usually a driver update without a reboot). "
                "Reboot, or reload the nvidia kernel modules.", ["sudo reboot"])
    if "libnvidia-ml" in low or "not loaded" in low:
        return ("No NVIDIA driver is installed or loaded. For a V100/P100/P40 install the R580 branch or older "
                "(R580 is the last branch that supports Maxwell, Pascal and Volta).", ["nvidia-smi"])
    return "Check that the GPU is visible: run nvidia-smi, and check CUDA_VISIBLE_DEVICES.", ["nvidia-smi"]


def run(ctx: CheckContext) -> Finding:
    nvml = ctx.facts.nvml
    if not nvml.available or not nvml.gpus:
        reason = nvml.reason or "NVML reports no GPU"
        fix, commands = _fix_for(reason)
        return CHECK.finding(Status.FAIL, f"No usable NVIDIA GPU: {reason}", {"nvml_reason": reason}, fix, commands)
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


CHECK = Check(id="gpu-present", title="NVIDIA GPU and driver", run=run)
