"""Static facts of an installed torch wheel, read from its files without importing torch.

`import torch` costs 1-3 s (most of a cold start); the facts the checks need from the wheel
never change while it is installed: torch/version.py is plain text, and the architectures it
was compiled for are named in the headers of the fat binaries in its CUDA library. Only the
ELF section headers and the fatbin container/entry headers are read (through mmap, so only the
pages holding headers are touched), never the kernels.
"""

from __future__ import annotations

import ast
import mmap
import struct
from collections import Counter
from pathlib import Path

from doctor.facts.files.safe_open import open_regular, read_capped

FATBIN_MAGIC = 0xBA55ED50
FATBIN_SECTION = b".nv_fatbin"
CUDA_LIBS = ("libtorch_cuda.so",)
KIND_PTX, KIND_CUBIN = 1, 2
VERSION_PY_LIMIT = 1 << 20  # torch's version.py is ~300 bytes
MAX_CONTAINERS = 1 << 20  # libtorch_cuda.so holds a few thousand; more is a file that is not one


class StaticReadError(Exception):
    """The wheel's files do not read as expected; the caller falls back to importing torch."""


def read_version_py(torch_dir: Path) -> dict[str, str | None]:
    """`__version__`, `cuda` and `hip` as torch/version.py assigns them (string or None literals only)."""
    try:
        tree = ast.parse(read_capped(torch_dir / "version.py", VERSION_PY_LIMIT, "torch/version.py").decode())
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise StaticReadError(f"torch/version.py unreadable: {exc}") from None
    out: dict[str, str | None] = {}
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name) and isinstance(node.value, ast.Constant) \
                        and isinstance(node.value.value, (str, type(None))):
                    out[t.id] = node.value.value
    if not isinstance(out.get("__version__"), str):
        raise StaticReadError("torch/version.py assigns no __version__ literal")
    return out


def _section(buf: mmap.mmap, name: bytes) -> tuple[int, int] | None:
    """(offset, size) of an ELF64 little-endian section by name, from the section headers alone."""
    if buf[:4] != b"\x7fELF" or buf[4] != 2 or buf[5] != 1:
        raise StaticReadError("not an ELF64 little-endian file")
    shoff, = struct.unpack_from("<Q", buf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", buf, 0x3A)
    def header(i: int) -> tuple[int, int, int]:
        sh_name, = struct.unpack_from("<I", buf, shoff + i * shentsize)
        sh_offset, sh_size = struct.unpack_from("<QQ", buf, shoff + i * shentsize + 0x18)
        return sh_name, sh_offset, sh_size
    _, str_off, str_size = header(shstrndx)
    for i in range(shnum):
        sh_name, off, size = header(i)
        end = buf.find(b"\0", str_off + sh_name, str_off + str_size)
        if buf[str_off + sh_name:end] == name:
            return off, size
    return None


def fatbin_archs(path: Path) -> list[tuple[frozenset[int], frozenset[int]]]:
    """For each fatbin container in the library: (cubin SM versions, PTX SM versions)."""
    # a FIFO or a device is refused by type before it is opened for reading (open_regular never blocks)
    with open_regular(path) as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        sec = _section(buf, FATBIN_SECTION)
        if sec is None:
            return []
        pos, end = sec
        end += pos
        containers: list[tuple[frozenset[int], frozenset[int]]] = []
        while pos + 16 <= end:
            magic, _version, hsize, fat_size = struct.unpack_from("<IHHQ", buf, pos)
            if magic != FATBIN_MAGIC:  # containers are 8-byte aligned; skip padding
                pos += 8
                continue
            entry, stop = pos + hsize, pos + hsize + fat_size
            if stop <= pos or len(containers) >= MAX_CONTAINERS:  # a size of 0 would read the same header forever
                raise StaticReadError(f"a fat-binary container at offset {pos} has size 0 or the file holds too many")
            cubins: set[int] = set()
            ptx: set[int] = set()
            while entry + 32 <= stop:
                kind, _v, ehsize, payload = struct.unpack_from("<HHIQ", buf, entry)
                arch, = struct.unpack_from("<I", buf, entry + 28)
                (cubins if kind == KIND_CUBIN else ptx if kind == KIND_PTX else set()).add(arch)
                if ehsize == 0:
                    break
                entry += ehsize + payload
            containers.append((frozenset(cubins), frozenset(ptx)))
            pos = stop
        return containers


def arch_list(torch_dir: Path) -> list[str]:
    """What `torch.cuda.get_arch_list()` would say: torch's own kernels are compiled once per target,
    so the commonest per-container target set is the wheel's TORCH_CUDA_ARCH_LIST (vendored kernels
    built for extra targets such as sm_90a are in the minority). No CUDA library: a CPU wheel, []."""
    libs = [torch_dir / "lib" / name for name in CUDA_LIBS if (torch_dir / "lib" / name).exists()]
    if not libs:
        return []
    counts: Counter = Counter()
    for lib in libs:
        try:
            counts.update(c for c in fatbin_archs(lib) if c[0] or c[1])
        except (OSError, ValueError, struct.error) as exc:
            raise StaticReadError(f"{lib.name}: {exc}") from None
    if not counts:
        raise StaticReadError(f"no fat binaries found in {', '.join(l.name for l in libs)}")
    (cubins, ptx), _ = counts.most_common(1)[0]
    return [f"sm_{a}" for a in sorted(cubins)] + [f"compute_{a}" for a in sorted(ptx)]


def read_static(torch_dir: Path) -> dict:
    """The torch child's static answer (same keys), read from files."""
    v = read_version_py(torch_dir)
    cuda = v.get("cuda")
    archs = arch_list(torch_dir) if cuda else []
    return {"ok": True, "version": v["__version__"], "cuda": cuda or "none", "arch_list": archs,
            "location": str(torch_dir / "__init__.py"), "warnings": [], "static_read": True}
