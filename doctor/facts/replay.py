"""Replay enters here: the one reader of a saved report, facts fixture or ticket bundle."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from doctor.facts.archive import ArchiveError, looks_like_archive, read_member
from doctor.facts.files.safe_open import read_capped
from doctor.facts.files.surrogates import ESCAPED_SURROGATE, without_lone_surrogates
from doctor.model.errors import ReplayError
from doctor.model.report import Loaded, parse_document

MAX_REPORT_BYTES = 64 * 2**20  # an hour of watch samples is ~10 MiB; a report is never near this
MAX_NESTING = 64  # a report nests ~8 deep; deeper JSON is not a report (and would exhaust the stack)


def load_document(path: str) -> Loaded:
    """Read a saved report, facts fixture or ticket bundle (.tar.gz/.zip). Every failure is a ReplayError with a one-line reason."""
    p = Path(path)
    try:
        if not p.exists():
            raise ReplayError(f"{path}: no such file")
        if p.is_dir():
            raise ReplayError(f"{path}: is a directory, expected a report .json file")
    except OSError as exc:  # a name over 255 bytes (ENAMETOOLONG), a folder without permission
        raise ReplayError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    try:
        raw = read_capped(p, MAX_REPORT_BYTES, "report")
    except OSError as exc:
        raise ReplayError(f"{path}: cannot read it ({exc.strerror})") from None
    if looks_like_archive(raw[:4]):
        try:
            raw = read_member(path)
        except ArchiveError as exc:
            raise ReplayError(f"{path}: {exc}") from None
    try:
        data = json_document(raw)
    except ReplayError as exc:
        raise ReplayError(f"{path}: {exc}") from None
    return parse_document(data, path)


def json_document(raw: bytes) -> Any:
    """The JSON in a report's bytes, its nesting checked before json.loads (whose recursion has no limit of its
    own); ReplayError with the reason. The replay and fleet both read reports through it."""
    try:
        text = raw.decode("utf-8")
        if _nesting(text) > MAX_NESTING:
            raise ReplayError(f"JSON nested more than {MAX_NESTING} levels deep; not a v100-doctor report")
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ReplayError(_why_unparsable(exc)) from None
    return without_lone_surrogates(data) if ESCAPED_SURROGATE.search(text) else data


def _why_unparsable(exc: BaseException) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return "not a text file (is it the report .json?)"
    if isinstance(exc, json.JSONDecodeError):
        return f"broken JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
    return f"not a usable JSON report ({type(exc).__name__}: {exc})"


def _nesting(text: str) -> int:
    """How deep brackets nest, strings aside: checked before json.loads, whose recursion has no limit of its own."""
    depth = deepest = 0
    for m in re.finditer(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', text):
        tok = m.group()
        if tok in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif tok in "]}":
            depth -= 1
    return deepest

