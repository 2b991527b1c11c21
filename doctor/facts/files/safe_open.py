"""Open only what can be read to its end: a regular file, read up to a cap that fits its purpose.

A FIFO would block the doctor forever, /dev/zero never ends, a device or socket is never a report or a
config. Refusals are OSErrors (with strerror), so every existing `except OSError` handler reports them.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO

KINDS = {stat.S_IFIFO: "a FIFO (named pipe)", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
         stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a directory"}


class RefusedRead(OSError):
    """The path exists but is not something the doctor reads (not a regular file, or over its size cap)."""

    def __init__(self, reason: str):
        super().__init__(errno.EINVAL, reason)


def open_regular(path: str | os.PathLike, allow_fifo: bool = False) -> BinaryIO:
    """Open for reading without blocking on a FIFO; refuse anything but a regular file (or a FIFO when allowed)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode) and not (allow_fifo and stat.S_ISFIFO(mode)):
            raise RefusedRead(f"is {KINDS.get(stat.S_IFMT(mode), 'not a regular file')}, not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_capped(path: str | os.PathLike, limit: int, what: str = "file") -> bytes:
    """The whole file, or RefusedRead when it is larger than `limit` bytes (read never goes past limit + 1)."""
    with open_regular(path) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise RefusedRead(f"is over {_size(limit)}, too large for a {what}")
    return data


def _size(n: int) -> str:
    return f"{n / 2**20:g} MiB" if n >= 2**20 else f"{n / 2**10:g} KiB"
