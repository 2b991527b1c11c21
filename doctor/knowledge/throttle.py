"""Clocks-event (throttle) reasons: what each one means, what shows it, and its own fix.

The meanings are NVML's (nvml.h, as documented in the NVML API reference and DCGM's 1:1 copy);
the fixes differ by reason, and by form factor: an SXM2 module is cooled and powered by its
baseboard and chassis, a PCIe card by the slot, its power cables and the chassis airflow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NVML_REASONS = "https://docs.nvidia.com/deploy/nvml-api/group__nvmlClocksEventReasons.html"
DCGM_REASONS = "https://docs.nvidia.com/datacenter/dcgm/latest/dcgm-api/dcgm-api-field-constants.html"


@dataclass(frozen=True)
class ThrottleReason:
    key: str  # as in GpuFacts.clocks_event_reasons
    label: str
    cause: str  # NVML's meaning
    heat: bool  # the card's own temperature is the cause
    fix_pcie: str
    fix_sxm: str
    source: str


REASONS: dict[str, ThrottleReason] = {r.key: r for r in (
    ThrottleReason("sw_power_cap", "SW power cap", "the clocks are lowered to stay under the enforced power limit", False,
                   "Normal near the power limit. If the limit was lowered, restore the default with nvidia-smi -pl; "
                   "decode barely needs SM clock, so a modest cap costs little.",
                   "Normal near the power limit; if the limit was lowered, restore the default with nvidia-smi -pl.", NVML_REASONS),
    ThrottleReason("hw_slowdown", "HW slowdown", "clocks cut by a factor of 2 or more: temperature too high, an external "
                   "power brake, or power draw so high that fast-trigger protection steps in", False,
                   "Check the card's temperature and its power cables (both 8-pin/EPS connectors seated, the PSU rated for "
                   "the load); read `nvidia-smi -q -d PERFORMANCE` for the exact sub-reason.",
                   "Check the baseboard's power delivery and the chassis/BMC power policy, and the module's temperature; "
                   "read `nvidia-smi -q -d PERFORMANCE` for the exact sub-reason.", NVML_REASONS + " ; " + DCGM_REASONS),
    ThrottleReason("hw_thermal_slowdown", "HW thermal slowdown", "the GPU or its memory is too hot: the hardware halves "
                   "the clocks or more", True,
                   "Cool the card: a passive PCIe card needs strong chassis airflow across its heatsink (fans, blanking "
                   "plates, neighbouring cards). A lower power limit keeps it cooler at a small SM-clock cost.",
                   "Cool the module: check the server's fan policy in the BMC, the heatsink mounting and the inlet "
                   "temperature; SXM2 modules rely entirely on chassis airflow.", NVML_REASONS),
    ThrottleReason("hw_power_brake_slowdown", "HW power brake", "an external power-brake assertion, e.g. by the system power "
                   "supply: not heat", False,
                   "Fix power delivery: a PSU that cannot carry the load, a failing PSU, or loose/daisy-chained PCIe power "
                   "cables. Lowering the GPU's power limit does not clear an external brake.",
                   "Fix power delivery: the chassis/BMC power policy or power capping, a failed or missing PSU in a redundant "
                   "pair; check the BMC event log. Lowering the GPU's power limit does not clear an external brake.",
                   NVML_REASONS + " ; " + DCGM_REASONS),
    ThrottleReason("sw_thermal_slowdown", "SW thermal slowdown", "the driver lowers clocks to keep the GPU or memory below "
                   "its max operating temperature", True,
                   "Cool the card (chassis airflow across the heatsink); a lower power limit keeps it under the max "
                   "operating temperature.",
                   "Cool the module: the server's fan policy in the BMC and the inlet temperature.", NVML_REASONS),
    ThrottleReason("sync_boost", "sync boost", "the GPU is in a sync-boost group and runs at the group's slowest clocks", False,
                   "Remove it from the sync-boost group (nvidia-smi / DCGM) unless the clocks are matched on purpose.",
                   "Remove it from the sync-boost group (nvidia-smi / DCGM) unless the clocks are matched on purpose.", NVML_REASONS),
    ThrottleReason("applications_clocks_setting", "applications clocks setting", "clocks are held at application clocks "
                   "someone set", False,
                   "Reset them with `nvidia-smi -rac` unless they were set on purpose.",
                   "Reset them with `nvidia-smi -rac` unless they were set on purpose.", NVML_REASONS),
)}


# NVML names of SXM modules that do not say so: the PCIe and NVL boards of the same GPU carry "PCIe" or "NVL"
# (NVIDIA H100 PCIe, NVIDIA H100 NVL, NVIDIA H200 NVL), the SXM ones not (NVIDIA H100 80GB HBM3, NVIDIA H200)
# https://www.nvidia.com/en-us/data-center/h200/ (H200 SXM up to 700 W, H200 NVL, a PCIe card, up to 600 W)
# https://www.nvidia.com/en-us/data-center/h100/ (H100 SXM up to 700 W, H100 NVL 350-400 W) (S)
SXM_NAMES = ("NVIDIA H200", "NVIDIA H100 80GB HBM3", "NVIDIA H100 94GB HBM2e", "NVIDIA H800", "NVIDIA H20",
             "NVIDIA B200", "NVIDIA B100", "NVIDIA GB200", "NVIDIA GH200")
# Cards made only as PCIe boards: consumer and workstation lines, and the data-centre inference cards (S: the
# product pages list no SXM version)
PCIE_MARKS = ("GEFORCE", "RTX", "TITAN", "QUADRO", "TESLA T4", "TESLA P4", "TESLA P40", "NVIDIA A2",
              "NVIDIA A10", "NVIDIA A16", "NVIDIA A30", "NVIDIA A40", "NVIDIA L4", "NVIDIA L40")
SXM_FROM_W = 450  # no PCIe data-centre board without "NVL" in its name draws more by default (H100 PCIe: 350 W)


def form_factor(name: str, power_default_limit_w: float | None = None) -> str:
    """'sxm' or 'pcie' from what NVML reports (the name, then the board's default power limit), else 'unknown'.
    A name with neither mark (NVIDIA H200: an SXM5 module at 700 W) is not guessed to be a PCIe card."""
    upper = name.upper()
    if "SXM" in upper:
        return "sxm"
    if "PCIE" in upper or " NVL" in upper:  # Tesla V100-PCIE-16GB, NVIDIA H100 PCIe, NVIDIA H200 NVL
        return "pcie"
    if any(re.search(r"(?<![\w-])" + re.escape(mark.strip()) + r"(?![\w])", upper) for mark in PCIE_MARKS):
        return "pcie"  # whole words: NVIDIA A10 is not NVIDIA A100
    if any(upper == n.upper() or upper.startswith(n.upper() + " ") for n in SXM_NAMES):
        return "sxm"
    if isinstance(power_default_limit_w, (int, float)) and power_default_limit_w > SXM_FROM_W:
        return "sxm"
    return "unknown"


def reason_fix(key: str, name: str) -> str:
    """The reason's fix for this card's form factor; both when the form factor is unknown."""
    r = REASONS[key]
    kind = form_factor(name)
    if kind == "unknown" and r.fix_sxm != r.fix_pcie:
        return f"{r.fix_pcie} On an SXM module: {r.fix_sxm}"
    return r.fix_sxm if kind == "sxm" else r.fix_pcie
