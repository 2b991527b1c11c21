"""Size units and how a size is written, once.

Memory is counted in binary units (NVML, torch and ExLlamaV2 all use MiB/GiB of 2**20/2**30 bytes); sizes the
user reads beside bandwidth are written in decimal GB (1e9 bytes), as GB/s is, so bytes ÷ GB/s gives seconds.
"""

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB
GB = 1e9  # decimal: the unit of model sizes beside bandwidth (GB/s = 1e9 bytes/s)


def gb(n_bytes: float, digits: int = 1) -> str:
    """A byte count as decimal GB with `digits` decimals: gb(12.3e9) == "12.3 GB"."""
    return f"{n_bytes / GB:.{digits}f} GB"


def human_bytes(n: float) -> str:
    """A byte count in the largest decimal unit it reaches (GB, MB, kB), two decimals: "4.13 GB", "512 B"."""
    for unit, size in (("GB", GB), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.2f} {unit}"
    return f"{int(n)} B"
