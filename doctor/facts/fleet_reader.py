"""Reading a fleet's reports: files, bundles and folders of them, one document at a time (streaming).

Each yield is (source, dict) or (source, ReplayError); a broken file is a row of the table, never a crash.
"""

from __future__ import annotations

import os
from typing import Iterator

from doctor.facts.archive import ArchiveError, looks_like_archive, read_member
from doctor.facts.files.safe_open import read_capped
from doctor.facts.replay import MAX_REPORT_BYTES, json_document
from doctor.model.errors import ReplayError

SUFFIXES = (".json", ".tar.gz", ".tgz", ".zip")


def report_paths(paths: list[str]) -> Iterator[str]:
    """Every report-like file under the given paths, folders walked in name order."""
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs.sort()
                yield from (os.path.join(root, f) for f in sorted(files) if f.endswith(SUFFIXES))
        else:
            yield path


def read_document(path: str) -> dict | ReplayError:
    try:  # a FIFO, /dev/zero or a 10 GB file is refused by type and size before it is read
        raw = read_capped(path, MAX_REPORT_BYTES, "report")
    except OSError as exc:
        return ReplayError(f"cannot read it ({exc.strerror or exc})")
    if looks_like_archive(raw[:4]):
        try:
            raw = read_member(path)
        except ArchiveError as exc:
            return ReplayError(str(exc))
    try:
        doc = json_document(raw)
    except ReplayError as exc:
        return ReplayError(f"not a report: {exc}")
    if not isinstance(doc, dict) or not str(doc.get("schema", "")).startswith("v100-doctor/"):
        return ReplayError("not a v100-doctor report (no schema field)")
    return doc


def iter_documents(paths: list[str]) -> Iterator[tuple[str, dict | ReplayError]]:
    for path in report_paths(paths):
        yield path, read_document(path)
