"""`fleet`'s engine: stream the documents, turn each into rows (replaying today's checks on a bare facts file),
and judge the whole. Large fleets are read by a few worker processes; rows are small, documents are not kept.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from multiprocessing.connection import Connection
from typing import Iterable

from doctor.facts.children import interrupts_ignored
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


WORKER_SIGNALS = tuple(getattr(signal, n) for n in ("SIGINT", "SIGHUP", "SIGTERM") if hasattr(signal, n))


def _worker(conn: Connection, sources: list[str], redact: bool) -> None:
    """One worker's share of the reports, its rows sent back whole. It leaves signals to the doctor (a Ctrl-C or a
    hang-up reaches the whole process group; the doctor ends its workers itself), and a doctor that went away
    (its end of the pipe closed) ends it quietly."""
    for sig in WORKER_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, WORKER_SIGNALS)
    try:
        conn.send(_rows_for_chunk(sources, redact))
    except OSError:
        pass
    finally:
        conn.close()


def _in_workers(sources: list[str], jobs: int, redact: bool) -> list[FleetRow]:
    """The reports split in `jobs` runs, one process each, the rows joined in the reports' order. No lock or queue
    is shared (a signal at any moment, once or twice, cannot leave one held): on any way out every worker still
    running is killed and reaped, with later signals ignored meanwhile."""
    workers: list[tuple[multiprocessing.Process, Connection]] = []
    try:
        for part in _chunks(sources, -(-len(sources) // jobs)):
            receive, send = multiprocessing.Pipe(duplex=False)
            # a signal between the fork and the worker's own handlers would be a traceback in the worker: held
            signal.pthread_sigmask(signal.SIG_BLOCK, WORKER_SIGNALS)
            try:
                worker = multiprocessing.Process(target=_worker, args=(send, part, redact), daemon=True)
                worker.start()
            finally:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, WORKER_SIGNALS)
            send.close()
            workers.append((worker, receive))
        rows: list[FleetRow] = []
        for _, receive in workers:
            rows += receive.recv()
        return rows
    finally:
        with interrupts_ignored():
            for worker, receive in workers:
                if worker.is_alive():
                    worker.kill()
                worker.join()
                receive.close()


def collect(paths: list[str], jobs: int | None = None, redact: bool = True) -> Fleet:
    """Every report under `paths`, judged as one fleet (redacted per document unless `redact` is False)."""
    sources = list(report_paths(paths))
    jobs = jobs or min(4, os.cpu_count() or 1)
    if jobs > 1 and len(sources) >= PARALLEL_FROM:
        rows = _in_workers(sources, jobs, redact)
    else:
        rows = _rows_for_chunk(sources, redact)
    return judge_fleet(rows, reports=len(sources))
