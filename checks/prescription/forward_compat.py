"""Is this machine running a newer CUDA than its kernel driver's through forward compatibility, and did it work?

Judged from what the machine shows: NVML's CUDA version (the loaded libcuda's) beyond what the kernel driver runs
natively, or a compat libcuda newer than the driver in reach; and from what torch did (it initialised CUDA and saw
the card). No message is invented: a driver that only looks too old is not a failure when torch ran.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from checks.prescription.compat import driver_runs_cuda
from doctor.knowledge.forward_compat import COMPAT_804, FORWARD_COMPAT, compat_driver_version, is_data_centre
from doctor.model.facts import Facts
from doctor.model.unknown import known


@dataclass(frozen=True)
class ForwardCompat:
    cuda: str  # the CUDA version the compat libcuda provides (NVML's)
    driver: str  # the kernel driver's version
    libcuda: str  # the compat libcuda's path, "" when only NVML's pair shows it
    supported: bool  # a data-centre card: forward compatibility can work here
    torch_ran: bool  # torch initialised CUDA and saw a device
    container: str = ""  # "docker", "podman", "" when none was seen
    nvidia_visible_devices: str | None = None  # the container runtime's variable, as recorded
    source: str = FORWARD_COMPAT

    def describe(self) -> str:
        where = f", libcuda {self.libcuda}" if self.libcuda else ""
        return f"CUDA {self.cuda} through forward compatibility (cuda-compat{where}) on kernel driver {self.driver}"

    def evidence(self) -> dict:
        return {"forward_compat_cuda": self.cuda, "kernel_driver": self.driver, "compat_libcuda": self.libcuda or None,
                "forward_compat_supported_card": self.supported, "torch_initialised_cuda": self.torch_ran,
                "container": self.container or None, "nvidia_visible_devices": self.nvidia_visible_devices,
                "source": self.source if self.supported else f"{self.source} ; {COMPAT_804}"}


def _newer(a: str, b: str) -> bool:
    try:
        return Version(a) > Version(b)
    except InvalidVersion:
        return False


def forward_compat(facts: Facts, card_name: str) -> ForwardCompat | None:
    """The forward compatibility this machine shows, or None when it runs its driver's own CUDA."""
    nvml, host, torch = facts.nvml, facts.host, facts.python.torch
    if not (known(nvml.driver_version) and known(nvml.cuda_driver_version)):
        return None
    driver, cuda = str(nvml.driver_version), str(nvml.cuda_driver_version)
    libcuda = str(host.cuda_compat_libcuda) if known(host.cuda_compat_libcuda) else ""
    compat_version = compat_driver_version(libcuda) if libcuda else None
    beyond_native = driver_runs_cuda(driver, cuda) is None  # NVML's CUDA needs a newer driver than the kernel's
    newer_libcuda = compat_version is not None and _newer(compat_version, driver)
    if not (beyond_native or newer_libcuda):
        return None
    ran = torch.cuda_available is True and known(torch.device_count) and int(torch.device_count) > 0
    return ForwardCompat(cuda=cuda, driver=driver, libcuda=libcuda if newer_libcuda else "",
                         supported=is_data_centre(card_name), torch_ran=ran,
                         container=str(host.container) if known(host.container) else "",
                         nvidia_visible_devices=facts.python.env.get("NVIDIA_VISIBLE_DEVICES"))


def runs_through_compat(facts: Facts, card_name: str, torch_cuda: str) -> ForwardCompat | None:
    """Forward compatibility that carries torch's CUDA on this machine, as torch showed by running; else None."""
    fc = forward_compat(facts, card_name)
    if fc is None or not (fc.supported and fc.torch_ran):
        return None
    try:
        carries = Version(fc.cuda) >= Version(torch_cuda)
    except InvalidVersion:
        return None
    return fc if carries else None
