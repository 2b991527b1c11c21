"""Writing models.json the way the loader reads it: one entry per line (a refresh's diff is one line per model that
changed), the format and version first. Used by scripts/refresh_catalogue.py."""

from __future__ import annotations

from typing import Any

from doctor.facts.catalogue.load import FORMAT
from doctor.model.serialize import strict_json


def dumps(version: str, sources: list[dict[str, Any]], entries: list[dict[str, Any]]) -> str:
    head = f'{{"format": "{FORMAT}", "version": "{version}",\n "sources": {strict_json(sources)},\n "entries": [\n'
    body = ",\n".join(strict_json(e, separators=(",", ":"), ensure_ascii=False) for e in entries)
    return head + body + "\n]}\n"
