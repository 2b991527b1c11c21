"""Gather LM Studio, a llama.cpp flavour: its home (~/.lmstudio, or the older ~/.cache/lm-studio), its CLI `lms`, the
llama.cpp runtimes it installed (extensions/backends/llama.cpp-<platform>-<gpu>-<cpu>-<version>/) with the CUDA
architectures of each runtime's libggml-cuda.so (read from its fat binary's headers, as llama.cpp's), and the runtime
selected for GGUF (.internal/backend-preferences-v1.json). Nothing is run or loaded; a file that cannot be read is
left out. Layout: https://lmstudio.ai/docs/cli (lms under ~/.lmstudio/bin); runtimes and preferences as users show them
(https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/966: "CUDA 12 llama.cpp (Linux) v1.48.0")."""

from __future__ import annotations

import json
import re
from pathlib import Path

from doctor.facts.engines.cuda_library import CUDA_LIB, read_cuda_library
from doctor.model.engines import LmStudioFacts, LmStudioRuntime

HOMES = (".lmstudio", ".cache/lm-studio")
RUNTIME = re.compile(r"^(?P<name>llama\.cpp-[\w.-]+?)-(?P<version>\d+\.\d+\.\d+)$")
PREFERENCES = ".internal/backend-preferences-v1.json"
MAX_PREFERENCES = 256 * 1024


def runtime_gpu(name: str) -> str:
    """cuda12 | cuda13 | cuda | vulkan | rocm | metal | cpu, from the runtime's folder name."""
    low = name.lower()
    for gpu in ("cuda13", "cuda12", "vulkan", "rocm", "metal"):
        if gpu in low:
            return gpu
    return "cuda" if "cuda" in low else "cpu"


def read_runtime(folder: Path) -> LmStudioRuntime | None:
    m = RUNTIME.match(folder.name)
    if m is None:
        return None
    gpu = runtime_gpu(m["name"])
    libs = tuple(read_cuda_library(p) for p in (folder / CUDA_LIB, folder / "lib" / CUDA_LIB) if p.is_file()) \
        if gpu.startswith("cuda") else ()
    return LmStudioRuntime(m["name"], m["version"], gpu, libs)


def selected_runtime(home: Path) -> str:
    """'name-version' of the llama.cpp runtime in the preferences, '' when there is none to read."""
    path = home / PREFERENCES
    try:
        if not path.is_file() or path.stat().st_size > MAX_PREFERENCES:
            return ""
        doc = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return ""
    rows = doc if isinstance(doc, list) else list(doc.values()) if isinstance(doc, dict) else []
    for row in rows:
        if isinstance(row, dict) and str(row.get("name", "")).startswith("llama.cpp") and isinstance(row.get("version"), str):
            return f"{row['name']}-{row['version']}"
    return ""


def gather_lm_studio(user_home: Path | None = None) -> LmStudioFacts:
    try:
        base = user_home if user_home is not None else Path.home()
    except (OSError, RuntimeError):  # no home to look in (HOME unset, no passwd entry)
        return LmStudioFacts()
    for rel in HOMES:
        home = base / rel
        if not home.is_dir():
            continue
        lms = home / "bin" / "lms"
        backends = home / "extensions" / "backends"
        try:
            folders = sorted(p for p in backends.iterdir() if p.is_dir()) if backends.is_dir() else []
        except OSError:
            folders = []
        runtimes = tuple(r for p in folders[:64] if (r := read_runtime(p)) is not None)
        return LmStudioFacts(str(home), str(lms) if lms.is_file() else "", runtimes, selected_runtime(home))
    return LmStudioFacts()
