"""Where the doctor runs: WSL2, a container, and a forward-compatibility libcuda (cuda-compat) in reach.

Each changes what is normal: under WSL2 the driver lists no per-process GPU use; in an NGC or vendor image the
`cuda-compat` package lets a data-centre card on an older host driver run a newer CUDA (NVIDIA's forward-compatibility
guide), so a driver that looks too old for torch's CUDA is fine when torch initialised CUDA. Read from files only.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Mapping

from doctor.model.unknown import Maybe, Unknown

# where images put the compat libcuda: /usr/local/cuda-X.Y/compat/ (NVIDIA's images, the container toolkit's
# ldconfig mode) and any compat/ directory named on LD_LIBRARY_PATH
COMPAT_GLOBS = ("/usr/local/cuda/compat/libcuda.so.*", "/usr/local/cuda-*/compat/libcuda.so.*")
_VERSIONED = re.compile(r"libcuda\.so\.\d+\.\d+")


# WSL2's own marks, any one enough: its GPU bridge, the folder its driver's libraries (libnvidia-ml, libcuda) are
# mounted from, the variables every WSL process gets, the kernel's name for itself
# https://learn.microsoft.com/en-us/windows/wsl/tutorials/gpu-compute (K: /usr/lib/wsl/lib, /dev/dxg)
WSL_PATHS = ("/dev/dxg", "/usr/lib/wsl/lib")
WSL_VARIABLES = ("WSL_DISTRO_NAME", "WSL_INTEROP")


def is_wsl(proc_version: str = "/proc/version", osrelease: str = "/proc/sys/kernel/osrelease",
           paths: tuple[str, ...] = WSL_PATHS, environ: Mapping[str, str] | None = None) -> Maybe[bool]:
    """WSL2's kernel names itself ("5.15.167.4-microsoft-standard-WSL2"); /dev/dxg is its GPU bridge and
    /usr/lib/wsl/lib holds its driver's libraries. Unknown only when nothing could be read and no mark is there
    (a host wrongly taken for native Linux is told to hunt for a process that WSL2 never lists)."""
    env = os.environ if environ is None else environ
    if any(os.path.exists(p) for p in paths) or any(env.get(v) for v in WSL_VARIABLES):
        return True
    read: list[str] = []
    errors: list[str] = []
    for path in (proc_version, osrelease):
        try:
            with open(path) as f:
                read.append(f.read().lower())
        except OSError as exc:
            errors.append(f"cannot read {path}: {exc.strerror}")
    if any("microsoft" in t or "wsl" in t for t in read):
        return True
    return False if read else Unknown("; ".join(errors))


def container_kind(root: str = "/") -> str:
    if os.path.exists(os.path.join(root, ".dockerenv")):
        return "docker"
    if os.path.exists(os.path.join(root, "run", ".containerenv")):
        return "podman"
    return ""


def compat_libcuda(env: Mapping[str, str] | None = None, globs: tuple[str, ...] = COMPAT_GLOBS) -> str:
    """The versioned compat libcuda found (the newest name), or "" when the machine has none."""
    library_path = (os.environ if env is None else env).get("LD_LIBRARY_PATH", "")
    patterns = list(globs) + [os.path.join(d, "libcuda.so.*") for d in library_path.split(":")
                              if d and "compat" in d]
    found = sorted({p for pattern in patterns for p in glob.glob(pattern) if _VERSIONED.search(os.path.basename(p))})
    return found[-1] if found else ""
