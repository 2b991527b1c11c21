"""The parent side of `probe --streams` in the engine in force: the ExLlamaV2 streams child (exl2_streams.py) run
like the probe worker (its own process group, per-phase timeouts, Ctrl-C or a closed terminal stops it), its rounds
kept as they arrive, so a probe stopped or failing half-way still reports the rounds it finished.

    report = run_exl2_streams(ProbeSpec(model_path=..., streams=(1, 2, 4)), on_event=print)

Returns a ProbeReport whose `streams` holds the rounds (never raises for a probe that failed, hung or was
cancelled); judged by doctor/verdict/streams.py like the --engine-url rounds.
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass, field
from typing import Any

from doctor.model.ids import FailureKind
from doctor.model.probe_results import ProbeReport
from doctor.model.serialize import LoadError, from_jsonable
from doctor.model.streams import StreamsProbe, StreamsRound, rounds_said
from doctor.probe.child import ChildOutcome, EventSink, run_child
from doctor.probe.protocol import ProbeSpec, spec_to_json
from doctor.probe.runner import worker_env

WORKER = "doctor.probe.exl2_streams"
ENGINE = "exllamav2"  # ProbeReport.engine of this probe: the ExLlamaV2 family, as the timed probe


@dataclass
class _Seen:
    """What the child said before its result: how it runs the jobs, and each finished round."""

    mode: dict = field(default_factory=dict)
    rounds: list[StreamsRound] = field(default_factory=list)

    def take(self, event: dict) -> None:
        if event.get("event") == "mode":
            self.mode = {k: event[k] for k in ("engine", "mode", "mode_why", "context_per_stream", "cache_mode",
                                               "compute_capability") if k in event}
        elif event.get("event") == "sample" and event.get("phase") == "streams" and isinstance(event.get("round"), dict):
            try:
                self.rounds.append(from_jsonable(StreamsRound, event["round"], "$.round"))
            except LoadError:
                pass


def run_exl2_streams(spec: ProbeSpec, *, on_event: EventSink | None = None, cancel: threading.Event | None = None,
                     timeouts: dict[str, float] | None = None, python: str = sys.executable,
                     env: dict[str, str] | None = None, worker_module: str = WORKER) -> ProbeReport:
    seen = _Seen()

    def relay(event: dict) -> None:
        seen.take(event)
        if on_event:
            on_event(event)

    outcome = run_child([python, "-m", worker_module], spec_to_json(spec), on_event=relay, timeouts=timeouts,
                        env=env or worker_env(spec), cancel=cancel)
    return streams_report(spec, outcome, seen)


def streams_report(spec: ProbeSpec, outcome: ChildOutcome, seen: _Seen) -> ProbeReport:
    base: dict[str, Any] = dict(model_path=spec.model_path, synthetic=spec.label if spec.label.startswith("synthetic") else "",
                seconds=outcome.seconds, asked=True, engine=ENGINE)
    if outcome.status == "finished" and outcome.result:
        try:
            streams = from_jsonable(StreamsProbe, outcome.result.get("result"), "$.result")
        except LoadError as exc:
            return ProbeReport(status="failed", summary=f"the streams probe's result could not be read: {exc}",
                               error_kind=FailureKind.INTERNAL, error_phase="done", **base,
                               streams=_partial(spec, seen, f"its result could not be read: {exc}"))
        return ProbeReport(status="ok" if any(r.total_tok_s > 0 for r in streams.rounds) else "failed",
                           summary=summary(streams), streams=streams, **base)
    err = outcome.error or {}
    status = {"cancelled": "cancelled", "timeout": "timeout", "crashed": "crashed"}.get(outcome.status, "failed")
    message = str(err.get("message") or f"the streams probe {status}")
    detail = str(err.get("detail") or "")
    if outcome.log_tail and outcome.log_tail not in detail:
        detail = (detail + "\n--- worker log (tail) ---\n" + outcome.log_tail).strip()
    kind = FailureKind.from_wire(err.get("kind") or status)
    streams = _partial(spec, seen, message, bad_input=kind == FailureKind.BAD_SPEC)
    return ProbeReport(status=status, summary=message if not streams.rounds else f"{summary(streams)}; then {message}",
                       streams=streams, error_kind=kind, error_phase=str(err.get("phase") or outcome.phase),
                       error_detail=detail[-4000:], interrupted_by=outcome.signum, **base)


def _partial(spec: ProbeSpec, seen: _Seen, error: str, bad_input: bool = False) -> StreamsProbe:
    """The rounds the child finished before it stopped, with why it stopped."""
    m = seen.mode
    return StreamsProbe(url="", api="", model=spec.label or spec.model_path, tokens=spec.tokens,
                        rounds=tuple(seen.rounds), error=error, engine=str(m.get("engine") or ENGINE),
                        mode=str(m.get("mode") or ""), mode_why=str(m.get("mode_why") or ""),
                        context_per_stream=int(m.get("context_per_stream") or 0),
                        cache_mode=str(m.get("cache_mode") or spec.cache_mode), bad_input=bad_input,
                        compute_capability=str(m.get("compute_capability") or ""))


def summary(streams: StreamsProbe) -> str:
    said = rounds_said(streams.rounds)
    return f"{streams.engine} {streams.mode}: {said}" if said else f"the concurrency probe could not run: {streams.error}"
