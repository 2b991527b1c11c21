"""Ticket bundles on disk: write named files into one .tar.gz or .zip, and read the report back out of one.

Members carry no owner name, uid or host data (tar headers would otherwise hold the user name),
and the archive is written to a temporary file first, so a failed run never leaves half a bundle.
"""

from __future__ import annotations

import io
import os
import tarfile
import time
import zipfile
from pathlib import Path
from typing import IO

from doctor.facts.files.atomic_write import whole_file
from doctor.model.errors import InputError
from doctor.model.units import MIB

SUFFIXES = (".tar.gz", ".tgz", ".zip")
REPORT_NAME = "report.json"
MAX_MEMBER = 64 << 20


class ArchiveError(InputError):
    """An archive cannot be written or read; the message says why (the user's file or folder, so exit 3)."""


def archive_kind(path: str) -> str | None:
    low = path.lower()
    if low.endswith((".tar.gz", ".tgz")):
        return "tar.gz"
    if low.endswith(".zip"):
        return "zip"
    return None


def looks_like_archive(head: bytes) -> bool:
    return head.startswith(b"\x1f\x8b") or head.startswith(b"PK\x03\x04")


def write_archive(path: str, folder: str, files: dict[str, bytes]) -> None:
    """Write `files` under `folder/` inside a new archive at `path` (replaced atomically)."""
    kind = archive_kind(path)
    if kind is None:
        raise ArchiveError(f"{path}: the name must end in {', '.join(SUFFIXES)}")
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    if not os.access(directory, os.W_OK):
        raise ArchiveError(f"cannot write in {directory}: Permission denied")
    try:  # an interrupt mid-write leaves no .bundle-XXXX behind (whole_file removes it on any exception)
        with whole_file(target, binary=True, prefix=".bundle-") as fh:
            (_write_tar if kind == "tar.gz" else _write_zip)(fh, folder, files)
    except OSError as exc:
        raise ArchiveError(f"cannot write {path}: {exc.strerror}") from None


def _write_tar(fh: IO[bytes], folder: str, files: dict[str, bytes]) -> None:
    now = int(time.time())
    with tarfile.open(fileobj=fh, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(f"{folder}/{name}")
            info.size, info.mtime, info.mode = len(data), now, 0o644
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))


def _write_zip(fh: IO[bytes], folder: str, files: dict[str, bytes]) -> None:
    stamp = time.localtime()[:6]
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            info = zipfile.ZipInfo(f"{folder}/{name}", date_time=stamp)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)


def read_member(path: str, name: str = REPORT_NAME) -> bytes:
    """The bytes of the first member called `name` (in any folder) of a .tar.gz or .zip."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
        if head.startswith(b"PK"):
            with zipfile.ZipFile(path) as zf:
                info = next((i for i in zf.infolist() if i.filename.rsplit("/", 1)[-1] == name), None)
                if info is None:
                    raise ArchiveError(f"the archive has no {name} (is it a v100-doctor bundle?)")
                _check_size(info.file_size, name)
                return zf.read(info)
        with tarfile.open(path, "r:gz") as tar:
            member = next((m for m in tar if m.isfile() and m.name.rsplit("/", 1)[-1] == name), None)
            if member is None:
                raise ArchiveError(f"the archive has no {name} (is it a v100-doctor bundle?)")
            _check_size(member.size, name)
            extracted = tar.extractfile(member)
            return extracted.read() if extracted else b""
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError) as exc:
        raise ArchiveError(f"the archive is damaged or not a bundle ({type(exc).__name__}: {exc})") from None


def _check_size(size: int, name: str) -> None:
    if size > MAX_MEMBER:
        raise ArchiveError(f"its {name} is {size / MIB:.0f} MiB, larger than any report; not a v100-doctor bundle")
