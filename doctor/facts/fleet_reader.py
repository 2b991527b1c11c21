"""Reading a fleet's reports: files, bundles and folders of them, one document at a time (streaming).

Each yield is (source, dict) or (source, ReplayError); a broken file is a row of the table, never a crash.
"""

from __future__ import annotations

import json
import os
from typing import Iterator

from doctor.facts.archive import ArchiveError, looks_like_archive, read_member
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
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        return ReplayError(f"cannot read it ({exc.strerror})")
    if looks_like_archive(raw[:4]):
        try:
            raw = read_member(path)
        except ArchiveError as exc:
            return ReplayError(str(exc))
    try:
        doc = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return ReplayError(f"not a report: {exc}")
    if not isinstance(doc, dict) or not str(doc.get("schema", "")).startswith("v100-doctor/"):
        return ReplayError("not a v100-doctor report (no schema field)")
    return doc


def iter_documents(paths: list[str]) -> Iterator[tuple[str, dict | ReplayError]]:
    for path in report_paths(paths):
        yield path, read_document(path)
