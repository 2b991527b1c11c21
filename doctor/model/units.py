"""Binary size units, written once: NVML, torch and ExLlamaV2 all count memory in MiB/GiB of 2**20/2**30 bytes."""

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB
