"""Every check, group by group in the order they run: written by scripts/generate_registry.py from each check
module's CHECK (its id, its group's package, its order) and GROUPS (checks/__init__.py); do not edit by hand.
"""

from __future__ import annotations

from checks.base import Check
from checks.engine.build import CHECK as ENGINE_BUILD
from checks.engine.gguf_fit import CHECK as GGUF_BUDGET
from checks.engine.launch import CHECK as ENGINE_LAUNCH
from checks.engine.support import CHECK as ENGINE
from checks.env.compute_capability import CHECK as COMPUTE_CAPABILITY
from checks.env.cuda_pairing import CHECK as CUDA_PAIRING
from checks.env.flash_attn import CHECK as FLASH_ATTN
from checks.env.gpu_present import CHECK as GPU_PRESENT
from checks.model.architecture import CHECK as ARCHITECTURE
from checks.model.ceiling import CHECK as CEILING
from checks.model.dtype import CHECK as DTYPE
from checks.model.memory_budget import CHECK as MEMORY_BUDGET
from checks.model.path import CHECK as MODEL_PATH
from checks.model.quant_format import CHECK as QUANT_FORMAT
from checks.multi_gpu.numbering import CHECK as GPU_NUMBERING
from checks.multi_gpu.tensor_parallel_mix import CHECK as TENSOR_PARALLEL_MIX
from checks.multi_gpu.topology import CHECK as GPU_TOPOLOGY
from checks.probe.exllamav2_ready import CHECK as EXLLAMAV2_READY
from checks.runtime.cpu_offload import CHECK as CPU_OFFLOAD
from checks.runtime.gpu_memory_health import CHECK as GPU_MEMORY_HEALTH
from checks.runtime.gpu_processes import CHECK as GPU_PROCESSES
from checks.runtime.pcie_link import CHECK as PCIE_LINK
from checks.runtime.thermal import CHECK as THERMAL
from checks.serving.server_load import CHECK as SERVER_LOAD

ENV_CHECKS: tuple[Check, ...] = (GPU_PRESENT, COMPUTE_CAPABILITY, CUDA_PAIRING, FLASH_ATTN)
MULTI_GPU_CHECKS: tuple[Check, ...] = (GPU_NUMBERING, GPU_TOPOLOGY, TENSOR_PARALLEL_MIX)
MODEL_CHECKS: tuple[Check, ...] = (MODEL_PATH, QUANT_FORMAT, ARCHITECTURE, DTYPE, MEMORY_BUDGET, CEILING)
ENGINE_CHECKS: tuple[Check, ...] = (ENGINE, ENGINE_BUILD, ENGINE_LAUNCH, GGUF_BUDGET)
RUNTIME_CHECKS: tuple[Check, ...] = (THERMAL, CPU_OFFLOAD, GPU_PROCESSES, PCIE_LINK, GPU_MEMORY_HEALTH)
SERVING_CHECKS: tuple[Check, ...] = (SERVER_LOAD,)
PROBE_CHECKS: tuple[Check, ...] = (EXLLAMAV2_READY,)

ALL_CHECKS: tuple[Check, ...] = (ENV_CHECKS + MULTI_GPU_CHECKS + MODEL_CHECKS + ENGINE_CHECKS + RUNTIME_CHECKS + SERVING_CHECKS + PROBE_CHECKS)
