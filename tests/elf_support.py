"""Hand-built ELF files with a .nv_fatbin section, for the readers of torch wheels and ggml CUDA libraries."""

import struct

from doctor.facts.python.torch_static import FATBIN_MAGIC


def entry(kind: int, arch: int, payload: bytes = b"\0" * 24) -> bytes:
    head = struct.pack("<HHIQII HHI", kind, 0x101, 64, len(payload), 0, 0, 0, 0, arch)
    return head.ljust(64, b"\0") + payload


def container(*entries: bytes) -> bytes:
    body = b"".join(entries)
    return struct.pack("<IHHQ", FATBIN_MAGIC, 1, 16, len(body)) + body


def elf_with_fatbin(fatbin: bytes) -> bytes:
    shstrtab = b"\0.shstrtab\0.nv_fatbin\0"
    data_off = 64
    str_off = data_off + len(fatbin)
    shoff = (str_off + len(shstrtab) + 7) // 8 * 8
    header = bytearray(64)
    header[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<Q", header, 0x28, shoff)
    struct.pack_into("<HHH", header, 0x3A, 64, 3, 1)
    def sh(name: int, off: int, size: int) -> bytes:
        s = bytearray(64)
        struct.pack_into("<I", s, 0, name)
        struct.pack_into("<QQ", s, 0x18, off, size)
        return bytes(s)
    body = bytes(header) + fatbin + shstrtab
    body = body.ljust(shoff, b"\0")
    return body + sh(0, 0, 0) + sh(1, str_off, len(shstrtab)) + sh(11, data_off, len(fatbin))
