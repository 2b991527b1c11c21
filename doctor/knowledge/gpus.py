"""GPU table: compute capability, memory, memory type and datasheet bandwidth."""

from __future__ import annotations

import re
from dataclasses import dataclass

CC_LEGACY = "https://developer.nvidia.com/cuda-legacy-gpus"
CC_CURRENT = "https://developer.nvidia.com/cuda-gpus"
VOLTA_WHITEPAPER = "https://images.nvidia.com/content/volta-architecture/pdf/volta-architecture-whitepaper.pdf"
A100_SPECS = "https://glennklockwood.com/garden/processors/A100"


@dataclass(frozen=True)
class GpuSpec:
    key: str  # what --target-gpu accepts
    name: str
    cc: str
    memory_gb: float
    memory_type: str
    bandwidth_gbs: float
    match: str  # regex against the NVML name
    source: str
    confidence: str
    fp16_slow: bool = False  # GP102-class cards run FP16 at 1:64 of FP32


GPUS: tuple[GpuSpec, ...] = (
    GpuSpec("v100-pcie-16gb", "Tesla V100 PCIe 16 GB", "7.0", 16, "HBM2 4096-bit", 900, r"V100[- ]PCIE[- ]16GB",
            "https://www.io-tech.fi/uutinen/nvidia-esitteli-tesla-v100-pci-express-kiihdyttimen-tieteelliseen-laskentaan/ ; " + CC_LEGACY, "S"),
    GpuSpec("v100-pcie-32gb", "Tesla V100 PCIe 32 GB", "7.0", 32, "HBM2 4096-bit", 900, r"V100[- ]PCIE[- ]32GB", CC_LEGACY, "S"),
    GpuSpec("v100-sxm2-16gb", "Tesla V100 SXM2 16 GB", "7.0", 16, "HBM2 4096-bit", 900, r"V100[- ]SXM2[- ]16GB", VOLTA_WHITEPAPER, "S"),
    GpuSpec("v100-sxm2-32gb", "Tesla V100 SXM2 32 GB", "7.0", 32, "HBM2 4096-bit", 900, r"V100[- ]SXM2[- ]32GB", VOLTA_WHITEPAPER, "S"),
    GpuSpec("v100s-pcie-32gb", "Tesla V100S PCIe 32 GB", "7.0", 32, "HBM2 4096-bit", 1134, r"V100S",
            "bandwidth not confirmed in a source read (K); cc: " + CC_LEGACY, "K"),
    GpuSpec("titan-v", "NVIDIA TITAN V", "7.0", 12, "HBM2 3072-bit", 653, r"TITAN V\b",
            "https://www.anandtech.com/show/12673/titan-v-deep-learning-deep-dive ; " + CC_LEGACY, "S"),
    GpuSpec("p100-pcie-16gb", "Tesla P100 PCIe 16 GB", "6.0", 16, "HBM2 4096-bit", 732, r"P100",
            "https://www.techworm.net/ (P100 16 GB 732 GB/s, 12 GB 549 GB/s) ; " + CC_LEGACY, "S"),
    # same "P100" name family: told apart from the 16 GB card by memory size or PCI device id (10de:15f7), not by name
    GpuSpec("p100-pcie-12gb", "Tesla P100 PCIe 12 GB", "6.0", 12, "HBM2 3072-bit", 549, r"P100",
            "https://www.techpowerup.com/gpu-specs/tesla-p100-pcie-12-gb.c2915 (549.1 GB/s) ; " + CC_LEGACY, "S"),
    GpuSpec("p40", "Tesla P40 24 GB", "6.1", 24, "GDDR5 384-bit", 346, r"\bP40\b",
            "TechPowerUp mirrors (347.1 GB/s), NVIDIA 346 GB/s ; " + CC_LEGACY, "S", fp16_slow=True),
    GpuSpec("t4", "Tesla T4 16 GB", "7.5", 16, "GDDR6 256-bit", 320, r"\bT4\b",
            "https://www.nvidia.com/en-us/data-center/tesla-t4/ (320+ GB/s) ; " + CC_CURRENT, "S"),
    GpuSpec("rtx-2080-ti", "GeForce RTX 2080 Ti", "7.5", 11, "GDDR6 352-bit", 616, r"2080 Ti", CC_CURRENT, "S"),
    GpuSpec("rtx-3090", "GeForce RTX 3090", "8.6", 24, "GDDR6X 384-bit", 936, r"RTX 3090\b", CC_CURRENT, "S"),
    GpuSpec("a10", "NVIDIA A10", "8.6", 24, "GDDR6 384-bit", 600, r"\bA10\b(?!0)", CC_CURRENT, "S"),
    GpuSpec("a100-40gb", "A100 40 GB", "8.0", 40, "HBM2 5120-bit", 1555, r"A100.*40GB", A100_SPECS, "S"),
    GpuSpec("a100-80gb-sxm", "A100 80 GB SXM4", "8.0", 80, "HBM2e 5120-bit", 2039, r"A100-SXM4-80GB", A100_SPECS, "S"),
    GpuSpec("a100-80gb-pcie", "A100 80 GB PCIe", "8.0", 80, "HBM2e 5120-bit", 1935, r"A100.*PCIE.*80GB|A100 80GB PCIe",
            "NVIDIA A100 datasheet value, not confirmed in a source read (K)", "K"),
    GpuSpec("l4", "NVIDIA L4", "8.9", 24, "GDDR6 192-bit", 300, r"\bL4\b", CC_CURRENT, "S"),
    GpuSpec("h100-sxm", "H100 SXM5 80 GB", "9.0", 80, "HBM3 5120-bit", 3350, r"H100 80GB HBM3|H100-SXM",
            "https://www.nvidia.com/en-us/data-center/h100/", "S"),
    GpuSpec("h100-pcie", "H100 PCIe 80 GB", "9.0", 80, "HBM2e 5120-bit", 2000, r"H100 PCIe",
            "NVIDIA H100 PCIe product brief PB-11133-001 (\"greater than 2,000 GBps\"): https://manuals.plus/m/56b0c3ef7d0a1c470c0af8f05a0bd1f29a778007472ba941201fbbb185c9bccd", "P"),
    GpuSpec("h100-nvl", "H100 NVL 94 GB", "9.0", 94, "HBM3 6016-bit", 3900, r"H100 NVL", "https://grokipedia.com/page/210100120 (H100 NVL 94 GB HBM3, up to 3.93 TB/s)", "S"),
    GpuSpec("h200", "NVIDIA H200 141 GB", "9.0", 141, "HBM3e 6016-bit", 4800, r"H200",
            "https://www.nvidia.com/en-us/data-center/h200/ ; MLCommons H200-SXM-141GB system description", "S"),
)

# PCI device ids (vendor 10de) of the cards this doctor is for: names a card NVML cannot see (a R590 driver on a
# V100). Source: the PCI ID repository, https://pci-ids.ucw.cz/read/PC/10de ; the same ids appear in public lspci
# outputs, e.g. "GP100GL [Tesla P100 PCIe 12GB] [10de:15f7]" (openstack/cyborg tests). K = not re-read in a source.
PCI_IDS = "https://pci-ids.ucw.cz/read/PC/10de"
PCI_DEVICE_IDS: dict[str, tuple[str, str]] = {
    "1db4": ("v100-pcie-16gb", "S"), "1db1": ("v100-sxm2-16gb", "S"), "1d81": ("titan-v", "S"),
    "15f8": ("p100-pcie-16gb", "S"), "15f7": ("p100-pcie-12gb", "S"), "1b38": ("p40", "S"),
    "1e04": ("rtx-2080-ti", "S"), "1eb8": ("t4", "K"),
}


def spec_for_name(nvml_name: str, memory_total_mib: float | None = None) -> GpuSpec | None:
    """The table row for an NVML device name such as 'Tesla V100-PCIE-16GB'; among rows the name fits
    (P100 12 GB and 16 GB), the one whose memory is nearest `memory_total_mib`."""
    fits = [spec for spec in GPUS if re.search(spec.match, nvml_name, re.IGNORECASE)]
    if len(fits) > 1 and isinstance(memory_total_mib, (int, float)):
        return min(fits, key=lambda s: abs(s.memory_gb * 1024 - memory_total_mib))
    return fits[0] if fits else None


def spec_for_pci(device: str) -> GpuSpec | None:
    """'0000:3b:00.0 10de:1db4' or '1db4' -> the V100 PCIe 16 GB row."""
    dev = device.rsplit(":", 1)[-1].strip().lower()
    row = PCI_DEVICE_IDS.get(dev)
    return spec_for_key(row[0]) if row else None


def spec_for_key(key: str) -> GpuSpec | None:
    key = key.lower().strip()
    for spec in GPUS:
        if spec.key == key:
            return spec
    return None
