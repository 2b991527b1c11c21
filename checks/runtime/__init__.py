"""Runtime health checks, in the order they run: heat/power, offload, competing processes, PCIe, memory health.

Each works at rest from the NVML snapshot in Facts and, when the run sampled the GPU (watch, probe),
under load from Facts.samples.
"""

from checks.runtime.cpu_offload import CHECK as CPU_OFFLOAD
from checks.runtime.gpu_memory_health import CHECK as GPU_MEMORY_HEALTH
from checks.runtime.gpu_processes import CHECK as GPU_PROCESSES
from checks.runtime.pcie_link import CHECK as PCIE_LINK
from checks.runtime.thermal import CHECK as THERMAL

RUNTIME_CHECKS = (THERMAL, CPU_OFFLOAD, GPU_PROCESSES, PCIE_LINK, GPU_MEMORY_HEALTH)
