"""Read a GGUF file's header: version, tensor count and the few metadata keys that name the model.

Only the metadata section is walked (with a byte limit); tensor data is never read. GGUF is
llama.cpp's format; ExLlamaV2 cannot load it, which is the point of recognising it.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO

from doctor.facts.safe_open import open_regular
from doctor.model.model_dir import GgufFacts
from doctor.model.unknown import Unknown

MAGIC = b"GGUF"
MAX_WALK_BYTES = 64 * 1024 * 1024
MIN_TENSOR_INFO = 4 + 4 + 4 + 8  # the smallest tensor info: name length, n_dims, type, offset (v1 widths)
MIN_KV = 4 + 4 + 1  # the smallest key/value: key length, value type, a one-byte value
WANTED = ("general.architecture", "general.name", "general.file_type", "general.size_label")
FIXED = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}

# llama.cpp include/llama.h, enum llama_ftype (P): https://github.com/ggml-org/llama.cpp/blob/master/include/llama.h
FILE_TYPES = {0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K", 11: "Q3_K_S",
              12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K",
              19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S", 22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL",
              26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S", 29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16"}


class _Walker:
    def __init__(self, fh: BinaryIO, size: int):
        self.fh, self.size = fh, size

    def take(self, n: int) -> bytes:
        if self.fh.tell() + n > min(self.size, MAX_WALK_BYTES):
            raise EOFError
        data = self.fh.read(n)
        if len(data) < n:
            raise EOFError
        return data

    def fixed(self, fmt: str):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self, len_fmt: str) -> str:
        return self.take(self.fixed(len_fmt)).decode("utf-8", errors="replace")

    def skip_value(self, vtype: int, len_fmt: str) -> None:
        if vtype in FIXED:
            self.take(struct.calcsize(FIXED[vtype]))
        elif vtype == 8:
            self.take(self.fixed(len_fmt))
        elif vtype == 9:
            item, count = self.fixed("<I"), self.fixed(len_fmt)
            if item in FIXED:
                self.take(struct.calcsize(FIXED[item]) * count)
            else:
                for _ in range(count):
                    self.skip_value(item, len_fmt)
        else:
            raise ValueError(f"unknown metadata value type {vtype}")


def is_gguf(path: Path) -> bool:
    try:
        with open_regular(path) as fh:
            return fh.read(4) == MAGIC
    except OSError:
        return False


def read_gguf(path: str | Path) -> GgufFacts:
    """Never raises: a damaged header becomes `problem` with what could be read so far."""
    p = Path(path)
    got: dict = {}
    version = tensors = kvs = Unknown("header unreadable")
    try:
        size = p.stat().st_size
        with open_regular(p) as fh:
            w = _Walker(fh, size)
            if w.take(4) != MAGIC:
                return GgufFacts(str(p), size, version, tensors, kvs, Unknown("not GGUF"), Unknown("not GGUF"),
                                 Unknown("not GGUF"), "not a GGUF file (no GGUF magic)")
            version = w.fixed("<I")
            len_fmt = "<I" if version == 1 else "<Q"
            tensors, kvs = w.fixed(len_fmt), w.fixed(len_fmt)
            if (tensors * MIN_TENSOR_INFO + kvs * MIN_KV) > size:
                return GgufFacts(str(p), size, version, tensors, kvs, Unknown("header lies"), Unknown("header lies"),
                                 Unknown("header lies"), f"the GGUF header lies: it claims {tensors:,} tensors and {kvs:,} "
                                 f"metadata keys, which cannot fit in {size:,} bytes (corrupt or not GGUF)")
            for _ in range(kvs):
                key = w.string(len_fmt)
                vtype = w.fixed("<I")
                if key in WANTED and vtype == 8:
                    got[key] = w.string(len_fmt)
                elif key in WANTED and vtype in FIXED:
                    got[key] = w.fixed(FIXED[vtype])
                else:
                    w.skip_value(vtype, len_fmt)
                if all(k in got for k in WANTED):
                    break
        problem = ""
    except EOFError:
        size = p.stat().st_size if p.exists() else 0
        problem = "the GGUF header ends early: truncated file (re-download it)"
    except (OSError, ValueError, struct.error) as exc:
        size = 0
        problem = f"the GGUF header cannot be read: {exc}"
    ft = got.get("general.file_type")
    return GgufFacts(
        path=str(p), file_bytes=size, version=version, tensor_count=tensors, kv_count=kvs,
        architecture=got.get("general.architecture", Unknown("no general.architecture key")),
        name=got.get("general.name", Unknown("no general.name key")),
        file_type=FILE_TYPES.get(ft, f"type {ft}") if isinstance(ft, int) else Unknown("no general.file_type key"),
        problem=problem,
    )
