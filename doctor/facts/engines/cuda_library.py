"""Read which CUDA architectures a ggml CUDA library (libggml-cuda.so) carries, from its fat binary's headers, never
by loading it: llama.cpp's, Ollama's runners', LM Studio's runtimes' (doctor/facts/engines/installed.py, lm_studio.py)."""

from __future__ import annotations

import struct
from pathlib import Path

from doctor.facts.python.torch_static import StaticReadError, fatbin_archs
from doctor.model.engines import CudaLibrary
from doctor.model.unknown import Unknown

CUDA_LIB = "libggml-cuda.so"


def read_cuda_library(path: Path, runner: str = "") -> CudaLibrary:
    """The SM versions a ggml CUDA library carries, as cubins and PTX (union over its fat binaries)."""
    try:
        containers = fatbin_archs(path)
    except (OSError, ValueError, struct.error, StaticReadError) as exc:
        why = Unknown(f"{path.name} unreadable: {exc}")
        return CudaLibrary(str(path), why, why, runner)
    if not containers:
        none = Unknown(f"{path.name} has no CUDA fat binary")
        return CudaLibrary(str(path), none, none, runner)
    cubins = sorted(set().union(*(c[0] for c in containers)))
    ptx = sorted(set().union(*(c[1] for c in containers)))
    return CudaLibrary(str(path), tuple(cubins), tuple(ptx), runner)
