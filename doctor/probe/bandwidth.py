"""The card's real memory bandwidth: a large device-to-device copy, timed with CUDA events.

A copy reads N bytes and writes N bytes, so the rate counts both (as `nvidia-smi`-style
bandwidth tests and the datasheet figure do). Decode mostly reads, so this is the honest
"measured" ceiling to put beside the datasheet one. Runs inside the worker (needs torch).
"""

from __future__ import annotations

from typing import Any

from doctor.model.probe_results import BandwidthResult
from doctor.model.units import MIB


def buffer_size(free_bytes: int, cap_bytes: int = 2048 * MIB) -> int:
    """Two buffers of this size fit easily in free memory; large enough that caches don't matter."""
    size = min(cap_bytes, free_bytes // 4)
    return max(64 * MIB, size // MIB * MIB)


def measure_copy_bandwidth(torch: Any, device: int = 0, iterations: int = 20, cap_bytes: int = 2048 * MIB) -> BandwidthResult:
    free, _total = torch.cuda.mem_get_info(device)
    n = buffer_size(free, cap_bytes)
    with torch.cuda.device(device):
        src = torch.empty(n, dtype=torch.uint8, device=f"cuda:{device}")
        dst = torch.empty_like(src)
        src.fill_(1)
        for _ in range(3):  # warm-up: first touches, clocks up
            dst.copy_(src)
        torch.cuda.synchronize(device)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iterations):
            dst.copy_(src)
        end.record()
        end.synchronize()
        seconds = start.elapsed_time(end) / 1000.0
        del src, dst
        torch.cuda.empty_cache()
    return BandwidthResult(gbs=round(2 * n * iterations / seconds / 1e9, 1), buffer_bytes=n, iterations=iterations,
                           seconds=round(seconds, 6))
