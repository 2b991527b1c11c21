"""Pick a concrete torch version + CUDA variant that has kernels for a card and runs on a driver."""

from __future__ import annotations

from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from checks.knowledge.cuda import MVC_FLOOR, TOOLKIT_DRIVER
from checks.knowledge.torch_wheels import WHEELS, WheelArchs, cubin_runs, ptx_runs


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


def wheel_has_kernel(row_archs: tuple[str, ...], row_ptx: tuple[str, ...], cc: str) -> str | None:
    if any(cubin_runs(a, cc) for a in row_archs):
        return "cubin"
    if any(ptx_runs(p, cc) for p in row_ptx):
        return "ptx"
    return None


@dataclass(frozen=True)
class TorchChoice:
    row: WheelArchs
    driver_mode: str  # toolkit | mvc

    @property
    def command(self) -> str:
        tag = "cu" + self.row.cuda.replace(".", "")
        return f'pip install "torch=={self.row.torch}.*" --index-url https://download.pytorch.org/whl/{tag}'


def choose_torch(cc: str, driver: str | None, nvcc_major: int | None = None) -> list[TorchChoice]:
    """Working (torch, CUDA) pairs, best first: newest torch; nvcc-matching CUDA major first (JIT builds need it)."""
    out = []
    for row in WHEELS:
        if wheel_has_kernel(row.archs, row.ptx, cc) != "cubin":
            continue  # PTX-only would JIT on every start and needs the toolkit driver
        mode = driver_runs_cuda(driver, row.cuda) if driver else "toolkit"
        if mode is None:
            continue
        out.append(TorchChoice(row, mode))

    def key(c: TorchChoice):
        major_match = nvcc_major is not None and int(c.row.cuda.split(".")[0]) == nvcc_major
        return (Version(c.row.torch), major_match, c.driver_mode == "toolkit", Version(c.row.cuda))

    return sorted(out, key=key, reverse=True)
