"""The one atomic writer: every file the doctor writes for the user (-o of every command, --prometheus, bundles,
the TUI's saves) is whole or as it was. A full disk, a kill or a Ctrl-C mid-write leaves the old file and no
temporary one: the bytes go to a temporary file beside the target, which is renamed over it only once complete.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from contextlib import contextmanager
from typing import IO, Any, Iterator

PLANTED = ("a link or a special file owned by another user in a shared folder (world-writable, sticky: like /tmp); "
           "the doctor does not write through it, as the kernel's protected_symlinks would not: choose another path")


def _shared_and_not_theirs(folder: os.stat_result, entry: os.stat_result) -> bool:
    """The kernel's rule (fs.protected_symlinks, protected_fifos): in a world-writable sticky folder an entry may be
    followed or written only by its owner or when the folder's owner owns it."""
    shared = folder.st_mode & stat.S_ISVTX and folder.st_mode & stat.S_IWOTH
    return bool(shared) and entry.st_uid not in (os.geteuid(), folder.st_uid)


def refuse_planted(path: str | os.PathLike) -> None:
    """Raise PermissionError when writing `path` would go through a link, or into a FIFO or device, that another
    user planted in a shared sticky folder (a root doctor's -o /tmp/report.json pointed at /etc/shadow). Every
    link on the way is judged where it lies; links the user owns and /dev/stdout are followed as usual."""
    seen = 0
    parts = os.path.abspath(path).split(os.sep)[1:]
    resolved = os.sep
    while parts:
        part = parts.pop(0)
        candidate = os.path.join(resolved, part)
        try:
            entry = os.lstat(candidate)
            folder = os.stat(resolved)
        except OSError:
            return  # nothing more exists on the way: the writer creates it, or says why it cannot
        if stat.S_ISLNK(entry.st_mode):
            if _shared_and_not_theirs(folder, entry):
                raise PermissionError(errno.EACCES, PLANTED, candidate)
            seen += 1
            if seen > 40:  # as the kernel's ELOOP
                raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), candidate)
            target = os.readlink(candidate)
            parts = [p for p in target.split(os.sep) if p] + parts
            resolved = os.sep if os.path.isabs(target) else resolved
            continue
        if not parts and not stat.S_ISREG(entry.st_mode) and not stat.S_ISDIR(entry.st_mode) \
                and _shared_and_not_theirs(folder, entry):
            raise PermissionError(errno.EACCES, PLANTED, candidate)  # a FIFO another user left: it would hang or leak
        resolved = os.path.normpath(candidate)


@contextmanager
def whole_file(path: str | os.PathLike, binary: bool = False, prefix: str = ".v100-doctor-") -> Iterator[IO[Any]]:
    """A handle on a temporary file beside `path`, renamed over it when the block ends; removed on any exception
    (KeyboardInterrupt and the doctor's Interrupted included). OSError from mkstemp means the folder refuses."""
    refuse_planted(path)
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
    there is no file to keep. Not one another user planted in a shared folder (refuse_planted)."""
    refuse_planted(path)
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
