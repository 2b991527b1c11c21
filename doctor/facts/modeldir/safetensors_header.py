"""Read a .safetensors header (never the tensor data) and check that it tells the truth.

Layout: 8-byte little-endian header length N, N bytes of JSON {name: {dtype, shape, data_offsets}},
then the data. A download cut short or a header that lies shows up as offsets past the end of the
file, or a byte range that does not match dtype x shape.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, replace
from pathlib import Path

from doctor.facts.files.safe_open import open_regular

MAX_HEADER_BYTES = 100 * 1024 * 1024  # the format's own limit (safetensors rejects larger headers)

DTYPE_BYTES = {"F64": 8, "I64": 8, "U64": 8, "F32": 4, "I32": 4, "U32": 4, "F16": 2, "BF16": 2, "I16": 2, "U16": 2,
               "F8_E4M3": 1, "F8_E5M2": 1, "I8": 1, "U8": 1, "BOOL": 1}

SUB_BYTE_DTYPES = ("F8_E8M0", "F4", "F6_E2M3", "F6_E3M2", "C64")  # newer safetensors types, sizes not checked here


@dataclass(frozen=True)
class TensorHeader:
    name: str
    dtype: str
    shape: tuple[int, ...]
    begin: int  # offset in the data section
    end: int

    @property
    def nbytes(self) -> int:
        return self.end - self.begin

    @property
    def elements(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


@dataclass(frozen=True)
class SafetensorsHeader:
    path: str
    file_bytes: int
    header_bytes: int
    tensors: tuple[TensorHeader, ...]
    metadata: dict
    problem: str = ""  # empty when the header is sound

    @property
    def data_start(self) -> int:
        return 8 + self.header_bytes


class HeaderError(ValueError):
    """The file is not a readable safetensors file; the message says what is wrong."""


def read_header(path: str | Path) -> SafetensorsHeader:
    """Parse the header; raise HeaderError for an unreadable one, set `problem` for a lying/truncated one."""
    p = Path(path)
    try:
        size = p.stat().st_size
        with open_regular(p) as fh:
            head = fh.read(8)
            if len(head) < 8:
                raise HeaderError(f"{p.name}: {size} bytes, too short to be a safetensors file (truncated download?)")
            (n,) = struct.unpack("<Q", head)
            if n > MAX_HEADER_BYTES:
                raise HeaderError(f"{p.name}: header claims {n:,} bytes (over the 100 MB limit): not a safetensors file or corrupt")
            if 8 + n > size:
                raise HeaderError(f"{p.name}: header claims {n:,} bytes but the file has only {size:,}: truncated download")
            raw = fh.read(n)
    except OSError as exc:
        raise HeaderError(f"{p.name}: cannot read it ({exc.strerror or exc})") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise HeaderError(f"{p.name}: header is not valid JSON ({exc.__class__.__name__}): corrupt or not safetensors") from None
    if not isinstance(data, dict):
        raise HeaderError(f"{p.name}: header is not a JSON object")
    metadata = data.pop("__metadata__", {}) or {}
    tensors = []
    for name, info in data.items():
        try:
            begin, end = info["data_offsets"]
            tensors.append(TensorHeader(name, str(info["dtype"]), tuple(int(d) for d in info["shape"]), int(begin), int(end)))
        except (KeyError, TypeError, ValueError, OverflowError):  # OverflowError: Infinity as a shape or offset
            raise HeaderError(f"{p.name}: tensor {name!r} has no valid dtype/shape/data_offsets") from None
    header = SafetensorsHeader(str(p), size, n, tuple(sorted(tensors, key=lambda t: t.begin)),
                               metadata if isinstance(metadata, dict) else {})
    return _with_problem(header)


def _with_problem(h: SafetensorsHeader) -> SafetensorsHeader:
    data_bytes = h.file_bytes - h.data_start
    end = max((t.end for t in h.tensors), default=0)
    if end > data_bytes:
        missing = end - data_bytes
        return replace(h, problem=f"truncated: the header describes {end:,} bytes of tensor data but the file holds "
                                  f"{data_bytes:,} ({missing:,} bytes missing; re-download this file)")
    for t in h.tensors:
        width = DTYPE_BYTES.get(t.dtype)
        if width is None and t.dtype not in SUB_BYTE_DTYPES:
            return replace(h, problem=f"header lies: tensor {t.name} has dtype {t.dtype[:20]!r}, which safetensors does not define")
        if any(d < 0 for d in t.shape) or t.begin < 0:
            return replace(h, problem=f"header lies: tensor {t.name} has a negative shape or offset")
        if t.end < t.begin:
            return replace(h, problem=f"header lies: tensor {t.name} ends before it begins")
        if width is not None and t.elements * width != t.nbytes:
            return replace(h, problem=f"header lies: tensor {t.name} is {t.dtype}{list(t.shape)} = {t.elements * width:,} "
                                      f"bytes but its offsets span {t.nbytes:,}")
    return h


def read_tensor_bytes(header: SafetensorsHeader, name: str, limit: int = 1 << 20) -> bytes | None:
    """The raw bytes of one small tensor (e.g. a g_idx), at most `limit` bytes; None if absent or too big."""
    t = next((t for t in header.tensors if t.name == name), None)
    if t is None or t.nbytes > limit:
        return None
    try:
        with open_regular(header.path) as fh:
            fh.seek(header.data_start + t.begin)
            data = fh.read(t.nbytes)
    except OSError:
        return None
    return data if len(data) == t.nbytes else None
