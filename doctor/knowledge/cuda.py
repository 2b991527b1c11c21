"""CUDA toolkit -> minimum driver, which architectures each toolkit can compile for, driver branches."""

from __future__ import annotations

from dataclasses import dataclass

RELNOTES = "https://docs.nvidia.com/cuda/archive/13.1.0/cuda-toolkit-release-notes/index.html"
MVC = "https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html"

# (toolkit, minimum Linux driver for the toolkit's own features) — CUDA 13.1 release notes, Table 3 (P)
TOOLKIT_DRIVER: tuple[tuple[str, str, str], ...] = (
    ("11.8", "520.61.05", RELNOTES), ("12.0", "525.60.13", RELNOTES), ("12.1", "530.30.02", RELNOTES),
    ("12.2", "535.54.03", RELNOTES), ("12.3", "545.23.06", RELNOTES), ("12.4", "550.54.14", RELNOTES),
    ("12.5", "555.42.02", RELNOTES), ("12.6", "560.28.03", RELNOTES), ("12.8", "570.26", RELNOTES),
    ("12.9", "575.51.03", RELNOTES), ("13.0", "580.65.06", RELNOTES), ("13.1", "590.44.01", RELNOTES),
)

# Minor-version compatibility: the whole major family runs on a driver >= this (limited features, no newer PTX JIT)
MVC_FLOOR: dict[int, tuple[str, str]] = {
    11: ("450.80.02", MVC),
    12: ("525.60.13", MVC),
    13: ("580.65.06", MVC),
}

# The newest host gcc each nvcc accepts: the `#if __GNUC__ > N` guard before "unsupported GNU version!" in its
# crt/host_config.h, read from NVIDIA's nvidia-cuda-nvcc-cu11/cu12 wheels and the CUDA 13.0 toolkit (P)
HOST_CONFIG = "https://pypi.org/project/nvidia-cuda-nvcc-cu12/ (nvidia/cuda_nvcc/include/crt/host_config.h)"
NVCC_MAX_GCC: tuple[tuple[str, int, str], ...] = (
    ("11.8", 11, HOST_CONFIG), ("12.0", 12, HOST_CONFIG), ("12.1", 12, HOST_CONFIG), ("12.4", 13, HOST_CONFIG),
    ("12.8", 14, HOST_CONFIG), ("13.0", 15, "CUDA 13.0.88 toolkit, include/crt/host_config.h"),
)
NVCC_GCC_SUMMARY = ", ".join(f"nvcc {nvcc} takes gcc <= {gcc}" for nvcc, gcc, _ in NVCC_MAX_GCC)


@dataclass(frozen=True)
class ArchRange:
    cuda_major: int
    min_cc: str
    max_cc: str
    source: str
    confidence: str


# Which compute capabilities nvcc of each major version can compile for (offline)
NVCC_ARCHS: tuple[ArchRange, ...] = (
    ArchRange(11, "3.5", "9.0", "https://gitlab.kitware.com/cmake/cmake/-/merge_requests/8031 (11.8 adds 8.9/9.0)", "S"),
    ArchRange(12, "5.0", "12.1", "https://docs.nvidia.com/cuda/archive/12.6.3/cufft/deprecated-functionality.html ; numba-cuda docs (CUDA 12: 5.0-12.1)", "P"),
    ArchRange(13, "7.5", "12.1", RELNOTES + " §2.5.2 (13.0 removed offline compilation for Maxwell, Pascal, Volta); https://github.com/NVIDIA/cuda-samples/issues/382", "P"),
)


@dataclass(frozen=True)
class DriverBranchSupport:
    architecture: str
    cc_prefixes: tuple[str, ...]
    last_branch: int | None  # None = still supported by current branches
    source: str
    confidence: str


DEPRECATION = "https://forums.developer.nvidia.com/t/unix-graphics-feature-deprecation-schedule/60588"
DRIVER_BRANCHES: tuple[DriverBranchSupport, ...] = (
    DriverBranchSupport("Maxwell", ("5.",), 580, DEPRECATION + " (\"The release 580 series will be the last to support ... Maxwell, Pascal, and Volta\")", "S"),
    DriverBranchSupport("Pascal", ("6.",), 580, DEPRECATION, "S"),
    DriverBranchSupport("Volta", ("7.0", "7.2"), 580, DEPRECATION, "S"),
    DriverBranchSupport("Turing", ("7.5",), None, DEPRECATION, "S"),
    DriverBranchSupport("Ampere", ("8.0", "8.6", "8.7"), None, DEPRECATION, "S"),
    DriverBranchSupport("Ada", ("8.9",), None, DEPRECATION, "S"),
    DriverBranchSupport("Hopper", ("9.",), None, DEPRECATION, "S"),
    DriverBranchSupport("Blackwell", ("10.", "11.", "12."), None, DEPRECATION, "S"),
)

# The last branch that drives the oldest supported architectures (R580: Maxwell, Pascal, Volta), and how long it lives
LAST_LEGACY_BRANCH = max(b.last_branch for b in DRIVER_BRANCHES if b.last_branch)
LEGACY_ARCHITECTURES = tuple(b.architecture for b in DRIVER_BRANCHES if b.last_branch == LAST_LEGACY_BRANCH)
LAST_LEGACY_BRANCH_EOL = ("R580 LTSB, supported until mid-2028", "https://docs.nvidia.com/datacenter/tesla/drivers/supported-drivers-and-cuda-toolkit-versions.html")


def legacy_architectures(conjunction: str = "and") -> str:
    """'Maxwell, Pascal and Volta': the architectures whose last driver branch is LAST_LEGACY_BRANCH."""
    *rest, last = LEGACY_ARCHITECTURES
    return f"{', '.join(rest)} {conjunction} {last}" if rest else last
