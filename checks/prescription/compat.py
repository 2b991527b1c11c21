"""Does a driver run a CUDA version, does a wheel hold a kernel for a card: the rules the route is built on."""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

from doctor.knowledge.cuda import MVC_FLOOR, TOOLKIT_DRIVER
from doctor.knowledge.torch_wheels import cubin_runs, ptx_runs


def driver_runs_cuda(driver: str, cuda: str) -> str | None:
    """'toolkit' when the driver meets the toolkit's own minimum, 'mvc' via minor-version compatibility, else None."""
    try:
        d = Version(driver)
    except InvalidVersion:
        return None
    table = dict((t, drv) for t, drv, _ in TOOLKIT_DRIVER)
    if cuda in table and d >= Version(table[cuda]):
        return "toolkit"
    major = int(cuda.split(".")[0])
    floor = MVC_FLOOR.get(major)
    if floor and d >= Version(floor[0]):
        return "mvc"
    return None


def driver_floor(cuda: str) -> tuple[str, str, str] | None:
    """The lowest driver that runs CUDA `cuda`, by the same rule as driver_runs_cuda (one rule for the live check
    and every prescription): minor-version compatibility's floor for its major where there is one, else the
    toolkit's own minimum. (version, how: 'mvc' | 'toolkit', source); None when neither table knows it."""
    table = {t: (drv, src) for t, drv, src in TOOLKIT_DRIVER}
    try:
        floor = MVC_FLOOR.get(int(cuda.split(".")[0]))
    except ValueError:
        floor = None
    options = []
    if floor:
        options.append((floor[0], "mvc", floor[1]))
    if cuda in table:
        options.append((table[cuda][0], "toolkit", table[cuda][1]))
    return min(options, key=lambda o: Version(o[0])) if options else None


def wheel_has_kernel(row_archs: tuple[str, ...], row_ptx: tuple[str, ...], cc: str) -> str | None:
    if any(cubin_runs(a, cc) for a in row_archs):
        return "cubin"
    if any(ptx_runs(p, cc) for p in row_ptx):
        return "ptx"
    return None


def major(version: object) -> int | None:
    """'12.6' -> 12; None when it is not a version."""
    try:
        return int(str(version).split(".")[0])
    except ValueError:
        return None
