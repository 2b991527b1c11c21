"""Runtime health checks: heat/power, offload, competing processes, PCIe, memory health.

Each works at rest from the NVML snapshot in Facts and, when the run sampled the GPU (watch, probe),
under load from Facts.samples.
"""
