"""Each catalogued model's licence, as its Hugging Face licence tag (licences.json beside this file, with its source):
what `v100-doctor fit --licence` filters on. A model the source gives none for is "unknown"."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

LICENCES_FILE = Path(__file__).with_name("licences.json")
UNKNOWN = "unknown"


@lru_cache(maxsize=1)
def _table() -> dict:
    return json.loads(LICENCES_FILE.read_text(encoding="utf-8"))


def licence_of(repo: str) -> str:
    """The Hub licence tag of a catalogued model ("apache-2.0", "llama3.1" ...), or "unknown"."""
    return _table()["licences"].get(repo, UNKNOWN)


def licence_source() -> str:
    t = _table()
    return f"licences: {t['source']} (read {t['read']}, confidence {t['confidence']})"
