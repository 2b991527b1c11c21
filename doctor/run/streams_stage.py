"""`probe --streams`: the concurrency probe as a stage of the one Run, after the checks: its rounds go into
Report.probe.streams and its verdict (doctor/verdict/streams.py) into the findings; a replay judges the saved rounds
again with today's verdict."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from doctor.model.events import ProbeEvent, ProbeFailed, ProbeFinished, ProbePhase
from doctor.model.probe_results import ProbeReport
from doctor.model.report import Report
from doctor.probe.streams import StreamsOptions, probe_streams
from doctor.verdict.failures import merge_findings
from doctor.verdict.streams import judge


def with_streams(report: Report, probe: ProbeReport) -> Report:
    """The probe and its verdict in the report (live or recorded)."""
    assert probe.streams is not None
    finding = judge(probe.streams)
    timings = {**report.timings_ms, "probe_ms": round(probe.seconds * 1000, 1)}
    return replace(report, probe=probe, findings=merge_findings(report.findings, [finding]), timings_ms=timings)


def run_streams(report: Report, url: str, options: StreamsOptions, emit: Callable[[ProbeEvent], None]) -> Report:
    emit(ProbePhase("streams", f"{len(options.counts)} rounds of concurrent streams against {url}"))
    streams = probe_streams(url, options, say=lambda text: emit(ProbePhase("streams", text)))
    ok = bool(streams.rounds) and not streams.error
    summary = ("; ".join(f"{r.streams} streams: {r.total_tok_s:g} tok/s in total, {r.per_stream_tok_s:g} each"
                         for r in streams.rounds) if ok else f"the concurrency probe could not run: {streams.error}")
    probe = ProbeReport(status="ok" if ok else "failed", summary=summary, streams=streams, seconds=streams.seconds,
                        asked=True)
    out = with_streams(report, probe)
    emit(ProbeFinished(summary) if ok else ProbeFailed(summary, "streams"))
    return out
