"""CUDA forward compatibility: a newer CUDA on an older kernel driver, through the `cuda-compat` package's libcuda.

NVIDIA's guide: it "is applicable only for systems with NVIDIA Data Center GPUs" (and select NGC-ready RTX SKUs and
Jetson); the package `cuda-compat-X-Y` ships the libcuda of the driver that matches CUDA X.Y, which images put under
/usr/local/cuda-X.Y/compat/. NVML's CUDA driver version is the loaded libcuda's (cuDriverGetVersion), its driver
version the kernel module's, so a pair such as driver 470.239.06 with CUDA 12.4 is the sign of it. On a card that
does not support it CUDA fails with error 804 ("forward compatibility was attempted on non supported HW").
"""

from __future__ import annotations

import re

FORWARD_COMPAT = "https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html"
# the container toolkit uses the compat libcuda only when its driver version is strictly greater than the host's
COMPAT_HOOK = "https://github.com/NVIDIA/nvidia-container-toolkit/issues/1426"
COMPAT_804 = "https://github.com/DeepVAC/TorchPod/issues/43"

# NVML names of data-centre GPUs (Tesla-branded through Volta/Turing; the later data-centre parts by model number)
_DATA_CENTRE = re.compile(r"^Tesla\b|\b(?:A|H|B|L)\d{1,3}[A-Z]?\b|\bT4\b|\bA[1-4]0\b|\bA2\b|GH200|GB200", re.IGNORECASE)
_VERSION_IN_NAME = re.compile(r"libcuda\.so\.(\d+(?:\.\d+)+)")


def is_data_centre(nvml_name: str) -> bool:
    """Forward compatibility works on this card (a data-centre GPU); GeForce, Quadro and TITAN cards get error 804."""
    return bool(_DATA_CENTRE.search(nvml_name)) and not re.search(r"GeForce|Quadro|TITAN|RTX", nvml_name, re.IGNORECASE)


def compat_driver_version(libcuda_path: str) -> str | None:
    """'550.54.14' from '/usr/local/cuda-12.4/compat/libcuda.so.550.54.14'."""
    m = _VERSION_IN_NAME.search(libcuda_path)
    return m.group(1) if m else None
