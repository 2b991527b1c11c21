"""Where torch keeps ExLlamaV2's JIT-built extension, and what state that build cache is in.

Read without importing torch or exllamav2 (importing exllamav2 *starts* the build). The path
rule is torch.utils.cpp_extension._get_build_directory: $TORCH_EXTENSIONS_DIR/<name>, else
<user cache>/torch_extensions/py<MAJ><MIN><abiflags>_cu<XYZ>/<name>, the user cache being
$XDG_CACHE_HOME or ~/.cache. A changed build configuration gets a new name (exllamav2_ext_v1 ...).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from doctor.model.facts import BuildCache

EXT_NAME = "exllamav2_ext"


def extensions_root(torch_cuda: str | None, env: Mapping[str, str] | None = None,
                    python: tuple[int, int] = sys.version_info[:2], abiflags: str = getattr(sys, "abiflags", "")) -> Path:
    env = os.environ if env is None else env
    if env.get("TORCH_EXTENSIONS_DIR"):
        return Path(env["TORCH_EXTENSIONS_DIR"])
    cache = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    cu = "cpu" if not torch_cuda or torch_cuda == "none" else "cu" + torch_cuda.replace(".", "")
    return Path(cache) / "torch_extensions" / f"py{python[0]}{python[1]}{abiflags}_{cu}"


def inspect_cache(torch_cuda: str | None, env: Mapping[str, str] | None = None, now: float | None = None) -> BuildCache:
    root = extensions_root(torch_cuda, env)
    candidates = sorted(root.glob(EXT_NAME + "*"), key=lambda p: p.stat().st_mtime if p.exists() else 0) if root.is_dir() else []
    build_dir = candidates[-1] if candidates else root / EXT_NAME
    libs = [lib for c in candidates for pattern in (EXT_NAME + "*.so", EXT_NAME + "*.pyd") for lib in c.glob(pattern)]
    built = bool(libs) and max(lib.stat().st_mtime for lib in libs) >= newest_source_mtime()
    lock = build_dir / "lock"
    lock_age = None
    if lock.exists():
        lock_age = max(0.0, (now or time.time()) - lock.stat().st_mtime)
    objects = len(list(build_dir.glob("*.o"))) if build_dir.is_dir() else 0
    return BuildCache(root=str(root), build_dir=str(build_dir), built=built, lock_age_s=lock_age, objects=objects)


def newest_source_mtime() -> float:
    """The newest C++/CUDA source of the installed exllamav2: ninja rebuilds a library older than it
    (a reinstall gives the sources new times, so a cached build then rebuilds)."""
    loc = exllamav2_location()
    if loc is None:
        return 0.0
    newest = 0.0
    for pattern in ("*.cpp", "*.cu", "*.h", "*.cuh"):
        for f in (Path(loc) / "exllamav2_ext").rglob(pattern):
            try:
                newest = max(newest, f.stat().st_mtime)
            except OSError:
                continue
    return newest


def has_prebuilt_extension() -> bool:
    """A prebuilt wheel (GitHub releases) installs a top-level exllamav2_ext module: no JIT build then."""
    try:
        return importlib.util.find_spec(EXT_NAME) is not None
    except (ImportError, ValueError):
        return False


def exllamav2_location() -> str | None:
    """The installed exllamav2 package folder, found without importing it."""
    try:
        spec = importlib.util.find_spec("exllamav2")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def gather_build_cache(torch_cuda: object) -> BuildCache | None:
    """The build cache as a fact for `exllamav2-ready`; None when exllamav2 is not installed."""
    if exllamav2_location() is None:
        return None
    cuda = torch_cuda if isinstance(torch_cuda, str) else None
    try:
        cache = inspect_cache(cuda)
    except OSError:
        return None
    return BuildCache(**{**cache.__dict__, "prebuilt": has_prebuilt_extension()})
