"""The one atomic writer: every file the doctor writes for the user (-o of every command, --prometheus, bundles,
the TUI's saves) is whole or as it was. A full disk, a kill or a Ctrl-C mid-write leaves the old file and no
temporary one: the bytes go to a temporary file beside the target, which is renamed over it only once complete.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from typing import IO, Any, Iterator


@contextmanager
def whole_file(path: str | os.PathLike, binary: bool = False, prefix: str = ".v100-doctor-") -> Iterator[IO[Any]]:
    """A handle on a temporary file beside `path`, renamed over it when the block ends; removed on any exception
    (KeyboardInterrupt and the doctor's Interrupted included). OSError from mkstemp means the folder refuses."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=folder)
    try:
        with (os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8")) as fh:
            yield fh
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_whole(path: str | os.PathLike, data: str | bytes) -> None:
    """`data` in `path`, whole or not at all. A device, a pipe or a link (-o /dev/stdout) is written in place:
    there is no file to keep."""
    if os.path.islink(path) or (os.path.exists(path) and not os.path.isfile(path)):
        if isinstance(data, bytes):
            with open(path, "wb") as raw:
                raw.write(data)
        else:
            with open(path, "w", encoding="utf-8") as text:
                text.write(data)
        return
    with whole_file(path, isinstance(data, bytes)) as fh:
        fh.write(data)
