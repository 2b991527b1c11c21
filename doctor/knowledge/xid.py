"""NVIDIA Xid codes as data: each code's name in NVIDIA's Xid catalogue, what it means for a slow or failing LLM
server, the pitfall it points to and how loud to be.

Some Xids are the hardware (48: an uncorrectable ECC error, 64: a page could not be retired); others are an
application's fault seen by the driver (13, 31, 43: an illegal instruction or address in a kernel), which a healthy
card reports whenever a program crashes on it. The log signatures (doctor/knowledge/signatures.py) are generated
from this table, one row per code, so `explain` says which kind an Xid line is.
"""

from __future__ import annotations

from dataclasses import dataclass

from doctor.model.ids import CheckId

XID_CATALOGUE = "https://docs.nvidia.com/deploy/xid-errors/index.html"


@dataclass(frozen=True)
class Xid:
    code: int
    name: str  # NVIDIA's name for the code (the catalogue)
    meaning: str
    check: CheckId
    severity: str  # "error": the card itself; "info": an application fault the card only reports
    fix: str


_APP_FAULT_FIX = ("Not a hardware fault by itself: read the engine's own error just before it (an illegal address or "
                  "instruction in a kernel, often a build for another card or a crash); if the same Xid repeats with "
                  "different programs, run `dcgmi diag -r 3` to test the card.")
_ECC_FIX = ("Stop the server, drain the GPU and reset it (`sudo nvidia-smi -r -i N`, or reboot) so the bad page is "
            "retired; if uncorrectable errors come back, the card's memory is failing: replace or RMA it. "
            "`nvidia-smi -q -d ECC,PAGE_RETIREMENT` shows the counters.")

XIDS: dict[int, Xid] = {x.code: x for x in (
    Xid(13, "Graphics Engine Exception", "an application's kernel hit an illegal instruction or address",
        CheckId.GPU_MEMORY_HEALTH, "info", _APP_FAULT_FIX),
    Xid(31, "GPU memory page fault", "an application touched memory it does not own (an illegal address)",
        CheckId.GPU_MEMORY_HEALTH, "info", _APP_FAULT_FIX),
    Xid(43, "GPU stopped processing", "the driver stopped a channel after an application fault or kill",
        CheckId.GPU_MEMORY_HEALTH, "info", _APP_FAULT_FIX),
    Xid(48, "DBE (Double Bit Error) ECC Error", "an uncorrectable (double-bit) error in the GPU's memory: the hardware",
        CheckId.GPU_MEMORY_HEALTH, "error", _ECC_FIX),
    Xid(63, "ECC page retirement or row remapping recording event", "a bad memory page was marked for retirement; a "
        "reset applies it", CheckId.GPU_MEMORY_HEALTH, "warning",
        "Reset the GPU or reboot when it is idle so the retirement takes effect; watch whether more pages follow."),
    Xid(64, "ECC page retirement or row remapper recording failure", "a bad memory page could not be retired: the "
        "hardware", CheckId.GPU_MEMORY_HEALTH, "error", _ECC_FIX),
    Xid(74, "NVLINK Error", "an NVLink connection between GPUs failed (SXM boards)", CheckId.GPU_PRESENT, "error",
        "Reset the GPUs or reboot; if it repeats, the NVLink bridge or the baseboard needs service (`nvidia-smi nvlink -s` "
        "shows the links)."),
    Xid(79, "GPU has fallen off the bus", "the card stopped answering on PCIe: power, seating or heat",
        CheckId.GPU_PRESENT, "error", "(the gpu-fallen-off-bus row)"),
    Xid(94, "Contained ECC error", "an uncorrectable memory error that the GPU contained (Ampere and newer): the "
        "application on it must restart", CheckId.GPU_MEMORY_HEALTH, "error", _ECC_FIX),
    Xid(95, "Uncontained ECC error", "an uncorrectable memory error the GPU could not contain (Ampere and newer): "
        "every application on it stops; reset the GPU", CheckId.GPU_MEMORY_HEALTH, "error", _ECC_FIX),
)}

# codes whose log row is written by hand elsewhere (79: gpu-fallen-off-bus also knows the wording without the Xid)
XID_ROWS_ELSEWHERE = frozenset({79})
