"""`fleet`'s engine: stream the documents, turn each into rows (replaying today's checks on a bare facts file),
and judge the whole. Large fleets are read by a few worker processes; rows are small, documents are not kept.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from itertools import repeat
from typing import Iterable

from doctor.facts.fleet_reader import read_document, report_paths
from doctor.facts.source import from_loaded
from doctor.model.errors import ReplayError
from doctor.model.fleet import Fleet, FleetRow
from doctor.model.report import parse_document, report_to_dict
from doctor.model.source import replayed
from doctor.render.redact import shareable_rows
from doctor.run.pipeline import diagnose
from doctor.verdict.fleet import judge_fleet, rows_from_report, unreadable_row

PARALLEL_FROM = 500  # below this many files one process is faster than starting workers
CHUNK = 64


def _replayed(doc: dict, source: str) -> dict:
    """A facts-only document (a fixture, a gathered snapshot): today's checks on it, as a report dict."""
    resolved = from_loaded(parse_document(doc, source), replayed(source))
    return report_to_dict(diagnose(resolved.plan, resolved.facts, source=resolved.provenance, note=resolved.note))


def rows_for(source: str, redact: bool = True) -> list[FleetRow]:
    """The rows of one document; `redact`: its secrets and identifying values replaced (what it was written with
    does not matter: a report saved with --no-redact is redacted here all the same)."""
    doc = read_document(source)
    if isinstance(doc, ReplayError):
        return [unreadable_row(source, str(doc))]
    try:
        if not doc.get("findings"):  # facts only (a fixture, a bare snapshot): judge it with today's checks
            doc = _replayed(doc, source)
        rows = rows_from_report(doc, source)
        return shareable_rows(doc, rows) if redact else rows
    except (ReplayError, AttributeError, TypeError, KeyError, ValueError) as exc:
        return [unreadable_row(source, f"damaged: {exc}")]


def _rows_for_chunk(sources: list[str], redact: bool = True) -> list[FleetRow]:
    return [row for s in sources for row in rows_for(s, redact)]


def _chunks(items: list[str], size: int) -> Iterable[list[str]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


def collect(paths: list[str], jobs: int | None = None, redact: bool = True) -> Fleet:
    """Every report under `paths`, judged as one fleet (redacted per document unless `redact` is False)."""
    sources = list(report_paths(paths))
    jobs = jobs or min(4, os.cpu_count() or 1)
    rows: list[FleetRow] = []
    if jobs > 1 and len(sources) >= PARALLEL_FROM:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for part in pool.map(_rows_for_chunk, _chunks(sources, CHUNK), repeat(redact)):
                rows += part
    else:
        rows = _rows_for_chunk(sources, redact)
    return judge_fleet(rows, reports=len(sources))
