"""Replay enters here: the one reader of a saved report, facts fixture or ticket bundle."""

from __future__ import annotations

import json
from pathlib import Path

from doctor.facts.archive import ArchiveError, looks_like_archive, read_member
from doctor.model.report import Loaded, parse_document
from doctor.model.errors import ReplayError


def load_document(path: str) -> Loaded:
    """Read a saved report, facts fixture or ticket bundle (.tar.gz/.zip). Every failure is a ReplayError with a one-line reason."""
    p = Path(path)
    if not p.exists():
        raise ReplayError(f"{path}: no such file")
    if p.is_dir():
        raise ReplayError(f"{path}: is a directory, expected a report .json file")
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise ReplayError(f"{path}: cannot read it ({exc.strerror})") from None
    if looks_like_archive(raw[:4]):
        try:
            raw = read_member(path)
        except ArchiveError as exc:
            raise ReplayError(f"{path}: {exc}") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ReplayError(f"{path}: not a text file (is it the report .json?)") from None
    except json.JSONDecodeError as exc:
        raise ReplayError(f"{path}: broken JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    return parse_document(data, path)
