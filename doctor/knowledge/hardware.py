"""A GPU that fell off the bus or lost its NVML handle: a hardware or power fault, not a software pairing.

The user-facing text for this pitfall lives here; gpu-present and `explain` (the Xid 79 and
nvidia-smi signatures) print it. Sources: NVIDIA's reply in open-gpu-kernel-modules#507 (Xid 79:
"overheating or lack of power or outdated SBIOS ... reseat power connectors/the card"), #387 (an
"Unable to determine the device handle ... Unknown Error" GPU "fixed by reseating"), and a passively
cooled Tesla P4 that overheated without a fan (pdbear/syno_nvidia_gpu_driver#22).
"""

from __future__ import annotations

FALLEN_OFF_BUS_SOURCE = "https://github.com/NVIDIA/open-gpu-kernel-modules/issues/507"
DEVICE_HANDLE_SOURCE = "https://github.com/NVIDIA/open-gpu-kernel-modules/issues/387"
NVML_LOST_WORDS = ("GPU is lost", "Unknown Error")  # pynvml's texts for NVML_ERROR_GPU_IS_LOST and NVML_ERROR_UNKNOWN

GPU_LOST_FIX = (
    "This is a hardware or power fault, not a driver or torch mismatch: no package change fixes it, and a reboot "
    "only brings the card back until the next fault. Check, in this order: power delivery (the power supply covers "
    "every GPU at full load, each GPU power connector is seated, no shared splitter cables); seating (reseat the card, "
    "take out risers and PCIe extension cables); temperature (passively cooled V100/P100/P40/T4 cards need server "
    "airflow or a fan on the card); then the kernel log around the fault (Xid 79 is the GPU falling off the bus) and "
    "the system BIOS version.")
GPU_LOST_COMMANDS = (
    "journalctl -k | grep -i -e xid -e 'fallen off'",
    "nvidia-smi -q -d TEMPERATURE,POWER",
)
