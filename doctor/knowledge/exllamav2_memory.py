"""How ExLlamaV2 0.3.2 spends VRAM besides weights and cache: defaults, reserves, scratch rules.

Each constant carries (value, source, confidence). The formulas that use them live in doctor/knowledge/arithmetic/vram_budget.py.
"""

from __future__ import annotations

from doctor.model.units import MIB

EXL2 = "https://github.com/turboderp-org/exllamav2/blob/v0.3.2/exllamav2/"

MAX_INPUT_LEN = (2048, EXL2 + "config.py (max_input_len = 2048: the prefill chunk; load_autosplit clips it to max_seq_len)", "P")
MAX_DQ_SIZE = (512 * 1024 ** 2, EXL2 + "config.py (max_dq_size = 512*(1024**2) elements dequantized at once)", "P")
AUTOSPLIT_RESERVE_GPU0 = (192 * MIB, EXL2 + "model.py load_autosplit_gen (reserve_vram = [192 MiB] + [64 MiB]*(n-1))", "P")
AUTOSPLIT_RESERVE_OTHER = (64 * MIB, EXL2 + "model.py load_autosplit_gen", "P")
AUTOSPLIT_MINIMUM_RESERVE = (256 * MIB, EXL2 + "model.py load_autosplit_gen (minimum_reserve_tensor, held while loading)", "P")
EMBEDDING_ON_HOST = ("The token embedding always stays in system RAM (device -1); only one row per token goes to the GPU",
                     EXL2 + "model.py set_device_map(embed_cpu=True) and load_autosplit_gen (idx 0 on CPU)", "P")
DEFAULT_MAX_SEQ_LEN = ("Without max_seq_len, ExLlamaV2Config uses max_position_embeddings (e.g. 32768 or 131072)",
                       EXL2 + "config.py prepare() (max_sequence_length / max_position_embeddings / ... else 2048)", "P")
# What the CUDA context, cuBLAS and the lazily loaded kernel images take outside torch's allocator. It grows
# with the SM count and with the kernels used; benchmarks/kv_cache_vs_exllamav2.py measures it.
CUDA_CONTEXT_MIB = (500, "estimate for pre-Hopper cards: llama.cpp reports 15841 of 16160 MiB free on a "
                    "V100-PCIE-16GB after its own context (~320 MiB); torch + cuBLAS + ExLlamaV2's kernels add more", "K")
CUDA_CONTEXT_HOPPER_MIB = (800, "measured on the H200 (driver 580, torch 2.11+cu130, exllamav2 0.3.2): 689 MiB after an "
                           "FP16 model, 777 after a GPTQ one, 815 after load_autosplit "
                           "(benchmarks/results/kv_cache_vs_exllamav2.json)", "P")


def cuda_context_bytes(cc: str | None) -> int:
    """The CUDA context allowance for a card of this compute capability (unknown: the pre-Hopper estimate)."""
    major = int(cc.split(".")[0]) if cc and cc.split(".")[0].isdigit() else 0
    return (CUDA_CONTEXT_HOPPER_MIB if major >= 9 else CUDA_CONTEXT_MIB)[0] * MIB

# Memory as NVML reports it on an idle card (MiB), for --target-gpu planning. Cards not listed fall back
# to the datasheet GB x 1024 x 0.985.
NVML_TOTAL_MIB: dict[str, tuple[float, str, str]] = {
    "v100-pcie-16gb": (16160.0, "nvidia-smi on V100-PCIE-16GB, drivers 396-535: '16160MiB' (older 410/418 show 16130MiB)", "S"),
    "v100-sxm2-16gb": (16160.0, "same HBM2 stack as the PCIe card; nvidia-smi '16160MiB' (K for SXM2)", "K"),
    "p100-pcie-16gb": (16280.0, "nvidia-smi on Tesla P100-PCIE-16GB: '16280MiB'", "K"),
    "t4": (15360.0, "nvidia-smi on Tesla T4: '15360MiB'", "K"),
    "h200": (143771.0, "nvidia-smi on the H200 test machine, driver 580.159.04: '143771 MiB' "
             "(benchmarks/results/issue28-accuracy/call1/run.log)", "P"),
}
PLANNING_FALLBACK_FRACTION = 0.985
