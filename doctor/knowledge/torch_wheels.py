"""Official PyTorch Linux x86_64 wheels: (torch minor, CUDA variant) -> the arch list they ship.

An entry "7.0" means sm_70 cubins. The binary rule decides what runs: a cubin runs on the same
major and an equal or higher minor (sm_60 runs on a 6.1 P40, sm_70 on a 7.5 T4, sm_75 never on 7.0);
PTX (`compute_XY`) can be JIT-compiled for any newer card.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

BUILD_SH = "https://github.com/pytorch/pytorch/blob/main/.ci/manywheel/build_cuda.sh"
BUILDER = "https://github.com/pytorch/builder/blob/release/2.5/manywheel/build_cuda.sh"
BINARY_RULE = "https://docs.nvidia.com/cuda/blackwell-compatibility-guide"

LEGACY = ("5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0")
LEGACY_118 = ("3.7",) + LEGACY


@dataclass(frozen=True)
class WheelArchs:
    torch: str  # "2.11"
    cuda: str  # "12.8"
    archs: tuple[str, ...]
    ptx: tuple[str, ...]
    source: str
    confidence: str


def _rows() -> tuple[WheelArchs, ...]:
    rows = []
    for minor in ("2.1", "2.2", "2.3"):
        rows.append(WheelArchs(minor, "11.8", LEGACY_118, (), BUILDER, "P"))
        rows.append(WheelArchs(minor, "12.1", LEGACY, (), BUILDER, "P"))
    for minor in ("2.4", "2.5"):
        rows.append(WheelArchs(minor, "11.8", LEGACY_118, (), BUILDER, "P"))
        rows.append(WheelArchs(minor, "12.1", LEGACY, (), BUILDER, "P"))
        rows.append(WheelArchs(minor, "12.4", LEGACY, (), BUILDER + " (fa48aaf5 reverted +PTX)", "P"))
    rows += [
        WheelArchs("2.6", "11.8", LEGACY_118, (), "https://github.com/pytorch/pytorch/blob/main/RELEASE.md", "S"),
        WheelArchs("2.6", "12.4", LEGACY, (), "https://github.com/pytorch/pytorch/issues/144071 (measured)", "P"),
        WheelArchs("2.6", "12.6", LEGACY, (), "https://github.com/pytorch/pytorch/blob/main/RELEASE.md", "S"),
        WheelArchs("2.7", "11.8", LEGACY_118, (), "https://github.com/pytorch/pytorch/blob/release/2.7/.ci/manywheel/build_cuda.sh (read through a third-party mirror)", "S"),
        WheelArchs("2.7", "12.6", LEGACY, (), "https://github.com/vllm-project/vllm/issues/21488 (measured)", "P"),
        WheelArchs("2.7", "12.8", ("7.5", "8.0", "8.6", "9.0", "10.0", "12.0"), ("12.0",),
                   "https://github.com/pytorch/pytorch/pull/147607 (Deprecate sm70 for cuda 12.8 binary)", "P"),
        WheelArchs("2.8", "12.6", LEGACY, (), BUILD_SH + " @00c7a380", "P"),
        WheelArchs("2.8", "12.8", ("7.0", "7.5", "8.0", "8.6", "9.0", "10.0", "12.0"), (),
                   "https://github.com/pytorch/pytorch/issues/160269 (Volta kept for 12.8/12.9)", "P"),
        WheelArchs("2.8", "12.9", ("7.0", "7.5", "8.0", "8.6", "9.0", "10.0", "12.0"), ("12.0",),
                   "https://github.com/pytorch/pytorch/pull/158700 (measured)", "P"),
    ]
    for minor in ("2.9", "2.10"):
        rows.append(WheelArchs(minor, "12.6", LEGACY, (), "https://github.com/pytorch/pytorch/pull/175253", "P"))
        rows.append(WheelArchs(minor, "12.8", ("7.0", "7.5", "8.0", "8.6", "9.0", "10.0", "12.0"), (),
                               "https://github.com/pytorch/pytorch/issues/182250 (2.10.0+cu128 measured)", "P"))
        rows.append(WheelArchs(minor, "13.0", ("7.5", "8.0", "8.6", "9.0", "10.0", "12.0"), ("12.0",),
                               "https://github.com/pytorch/pytorch/pull/164471", "P"))
    rows += [
        WheelArchs("2.11", "12.6", LEGACY, (), "https://github.com/pytorch/pytorch/issues/182250 (measured)", "P"),
        WheelArchs("2.11", "12.8", ("7.5", "8.0", "8.6", "9.0", "10.0", "12.0"), (),
                   "https://github.com/pytorch/pytorch/issues/172352 (RFC: drop sm70 from cu128 in 2.11); #182250 (measured)", "P"),
        WheelArchs("2.11", "13.0", ("7.5", "8.0", "8.6", "9.0", "10.0", "12.0"), (),
                   "https://github.com/pytorch/pytorch/pull/175253 ; measured on the H200: 2.11.0+cu130 sm_75..sm_120", "P"),
    ]
    for minor in ("2.12", "2.13", "2.14"):
        rows.append(WheelArchs(minor, "12.6", LEGACY, (), "https://github.com/pytorch/pytorch/pull/182849", "P"))
        rows.append(WheelArchs(minor, "13.0", ("7.5", "8.0", "8.6", "9.0", "10.0", "12.0"), (),
                               "https://github.com/pytorch/pytorch/issues/178665", "P"))
    return tuple(rows)


WHEELS: tuple[WheelArchs, ...] = _rows()

# Which CUDA variants ship per release (RELEASE.md compatibility matrix), newest last
RELEASE_VARIANTS: dict[str, tuple[str, ...]] = {
    "2.1": ("11.8", "12.1"), "2.2": ("11.8", "12.1"), "2.3": ("11.8", "12.1"), "2.4": ("11.8", "12.1", "12.4"),
    "2.5": ("11.8", "12.1", "12.4"), "2.6": ("11.8", "12.4", "12.6"), "2.7": ("11.8", "12.6", "12.8"),
    "2.8": ("12.6", "12.8", "12.9"), "2.9": ("12.6", "12.8", "13.0"), "2.10": ("12.6", "12.8", "13.0"),
    "2.11": ("12.6", "12.8", "13.0"), "2.12": ("12.6", "13.0"), "2.13": ("12.6", "13.0"), "2.14": ("12.6", "13.0"),
}
RELEASE_SOURCE = "https://github.com/pytorch/pytorch/blob/main/RELEASE.md"


def lookup(torch_minor: str, cuda: str) -> WheelArchs | None:
    for row in WHEELS:
        if row.torch == torch_minor and row.cuda == cuda:
            return row
    return None


def cubin_runs(cubin_cc: str, card_cc: str) -> bool:
    """NVIDIA binary rule: same major, cubin minor <= card minor."""
    cm, cn = (int(x) for x in cubin_cc.split("."))
    gm, gn = (int(x) for x in card_cc.split("."))
    return cm == gm and cn <= gn


def ptx_runs(ptx_cc: str, card_cc: str) -> bool:
    """PTX can be JIT-compiled for any card at or above its target."""
    return tuple(int(x) for x in ptx_cc.split(".")) <= tuple(int(x) for x in card_cc.split("."))


def arch_list_to_ccs(arch_list: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """['sm_70','compute_90'] -> (('7.0',), ('9.0',)) as (cubins, ptx)."""
    cubins: list[str] = []
    ptx: list[str] = []
    for a in arch_list:
        kind, _, num = a.partition("_")
        num = num.rstrip("a").rstrip("f")
        if not num.isdigit():
            continue
        cc = f"{num[:-1]}.{num[-1]}"
        (cubins if kind == "sm" else ptx).append(cc)
    return tuple(cubins), tuple(ptx)


# ROCm builds say so in the local version ("2.5.1+rocm6.2", from https://download.pytorch.org/whl/rocm6.2) and leave
# torch.version.cuda None (torch.version.hip is set instead): "`cuda` throughout PyTorch means ROCm if on ROCm"
# (AMD maintainer, https://github.com/ROCm/pytorch/issues/513)
ROCM_SOURCE = "https://github.com/ROCm/pytorch/issues/513"


def rocm_of(torch_version: str) -> str | None:
    """'6.2' for '2.5.1+rocm6.2'; None for a CUDA or CPU build."""
    m = re.search(r"\+rocm(\d+(?:\.\d+)*)", torch_version)
    return m.group(1) if m else None
