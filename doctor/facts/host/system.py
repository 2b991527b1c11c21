"""The host: OS, CPU, RAM and swap, via psutil and /etc/os-release."""

from __future__ import annotations

import os
import platform
import socket

from doctor.facts.host.runtime_env import compat_libcuda, container_kind, is_wsl
from doctor.model.facts import HostFacts
from doctor.model.units import MIB
from doctor.model.unknown import Maybe, Unknown


def _os_name() -> str:
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return f"{platform.system()} {platform.release()}"


def _cpu_model() -> str | Unknown:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or Unknown("CPU model not reported")


def nvidia_pci_devices(root: str = "/sys/bus/pci/devices") -> tuple[str, ...] | Unknown:
    """NVIDIA GPUs on the PCI bus, whether or not a driver claims them (so 'driver too new' is visible)."""
    try:
        entries = sorted(os.listdir(root))
    except OSError as exc:
        return Unknown(f"cannot list {root}: {exc.strerror}")
    found = []
    for entry in entries:
        try:
            with open(os.path.join(root, entry, "vendor")) as f:
                vendor = f.read().strip()
            with open(os.path.join(root, entry, "class")) as f:
                cls = f.read().strip()
            with open(os.path.join(root, entry, "device")) as f:
                device = f.read().strip()
        except OSError:
            continue
        if vendor == "0x10de" and cls.startswith("0x03"):
            found.append(f"{entry} 10de:{device[2:]}")
    return tuple(found)


def gather_host() -> HostFacts:
    ram_total: Maybe[float]
    ram_available: Maybe[float]
    swap_total: Maybe[float]
    swap_used: Maybe[float]
    try:
        import psutil  # lazy: a missing or broken psutil is a fact (Unknown), not an import error

        vm, sw = psutil.virtual_memory(), psutil.swap_memory()
        ram_total, ram_available = round(vm.total / MIB, 1), round(vm.available / MIB, 1)
        swap_total, swap_used = round(sw.total / MIB, 1), round(sw.used / MIB, 1)
    except Exception as exc:
        ram_total = ram_available = swap_total = swap_used = Unknown(f"psutil unavailable: {exc}")
    return HostFacts(
        os=_os_name(),
        kernel=platform.release(),
        hostname=socket.gethostname(),
        cpu_model=_cpu_model(),
        cpu_count=os.cpu_count() or Unknown("os.cpu_count() gave nothing"),
        nvidia_pci_devices=nvidia_pci_devices(),
        wsl=is_wsl(), container=container_kind(), cuda_compat_libcuda=compat_libcuda(),
        ram_total_mib=ram_total, ram_available_mib=ram_available,
        swap_total_mib=swap_total, swap_used_mib=swap_used,
    )
