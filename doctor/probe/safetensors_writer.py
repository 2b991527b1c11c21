"""A streaming safetensors writer: header first, then each tensor's bytes, never the whole model in RAM.

The format is 8 bytes of little-endian header length, a JSON header {name: {dtype, shape,
data_offsets}}, padded with spaces to a multiple of 8, then the raw data in header order.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from typing import BinaryIO, Callable

from doctor.facts.modeldir.safetensors_header import DTYPE_BYTES

ITEMSIZE = DTYPE_BYTES  # the reader's table: what one writes, the other reads


@dataclass(frozen=True)
class TensorEntry:
    name: str
    dtype: str  # safetensors dtype tag: F16, I32 ...
    shape: tuple[int, ...]
    write: Callable[[BinaryIO, int], None]  # writes exactly nbytes of data to the file

    @property
    def nbytes(self) -> int:
        n = ITEMSIZE[self.dtype]
        for d in self.shape:
            n *= d
        return n


def header_bytes(entries: list[TensorEntry], metadata: dict[str, str] | None = None) -> bytes:
    header: dict = {"__metadata__": metadata or {"format": "pt"}}
    offset = 0
    for e in entries:
        header[e.name] = {"dtype": e.dtype, "shape": list(e.shape), "data_offsets": [offset, offset + e.nbytes]}
        offset += e.nbytes
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw


def write_safetensors(path: str, entries: list[TensorEntry], metadata: dict[str, str] | None = None,
                      on_tensor: Callable[[int, int], None] | None = None) -> int:
    """Write the file; returns its data size in bytes. `on_tensor(done, total)` reports progress."""
    total = 0
    with open(path, "wb") as fh:
        fh.write(header_bytes(entries, metadata))
        for i, e in enumerate(entries):
            start = fh.tell()
            e.write(fh, e.nbytes)
            written = fh.tell() - start
            if written != e.nbytes:
                raise ValueError(f"{e.name}: wrote {written} bytes, expected {e.nbytes}")
            total += written
            if on_tensor:
                on_tensor(i + 1, len(entries))
    return total
