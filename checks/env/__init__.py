"""Environment checks, in the order they run: GPU, capability, CUDA pairing, flash-attn."""

from checks.env.compute_capability import CHECK as COMPUTE_CAPABILITY
from checks.env.cuda_pairing import CHECK as CUDA_PAIRING
from checks.env.flash_attn import CHECK as FLASH_ATTN
from checks.env.gpu_present import CHECK as GPU_PRESENT

ENV_CHECKS = (GPU_PRESENT, COMPUTE_CAPABILITY, CUDA_PAIRING, FLASH_ATTN)
