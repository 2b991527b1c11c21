"""`server-load`: the engine server's own counters over the watch window (watch --engine-url), beside NVML: requests
in flight, requests waiting for a slot, tokens served per second, slots busy. It tells "slow" from "queued": a request
that waited for a slot is slow to its user while every running one decodes at full speed.

Counters: llama-server's /metrics (started with --metrics: requests_processing, requests_deferred,
tokens_predicted_total, tokens_predicted_seconds_total) and /slots; vLLM's /metrics (num_requests_running,
num_requests_waiting, generation_tokens_total). Ollama keeps no such counters (its /api/ps lists the loaded models).
Sources: https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md ;
https://docs.vllm.ai/en/latest/design/metrics.html
"""

from __future__ import annotations

from checks.base import Check, CheckContext
from doctor.model.findings import Finding, Status
from doctor.model.ids import CheckId
from doctor.model.samples import ServerSample, ServerSeries

FIXES = ("llama-server: --parallel N -c <N x the context each user needs> (each slot holds its own context)",
         "Ollama: OLLAMA_NUM_PARALLEL=N; vLLM: --max-num-seqs N, with the memory for N sequences")


def _span(samples: tuple[ServerSample, ...], key: str) -> tuple[float, float, float] | None:
    """(first value, last value, seconds between them) of a counter read at two ticks or more."""
    seen = [(s.t_s, getattr(s, key)) for s in samples if getattr(s, key) is not None]
    if len(seen) < 2 or seen[-1][0] <= seen[0][0]:
        return None
    return seen[0][1], seen[-1][1], seen[-1][0] - seen[0][0]


def _most(samples: tuple[ServerSample, ...], key: str) -> float | None:
    vals = [getattr(s, key) for s in samples if getattr(s, key) is not None]
    return max(vals) if vals else None


def summary(series: ServerSeries) -> dict:
    """What the window's counters say: served tok/s, per-request decode speed, most requests in flight and waiting."""
    s = series.samples
    out: dict = {"url": series.url, "server": series.kind, "readings": len(s)}
    tokens = _span(s, "tokens_total")
    if tokens is not None:
        a, b, secs = tokens
        out["served_tok_s"] = round(max(0.0, b - a) / secs, 2)
        out["tokens_served"] = round(max(0.0, b - a))
        decode = _span(s, "decode_s_total")
        if decode is not None and decode[1] > decode[0]:
            out["per_request_tok_s"] = round(max(0.0, b - a) / (decode[1] - decode[0]), 2)
    for key, name in (("in_flight", "most_in_flight"), ("queued", "most_queued"), ("slots_busy", "most_slots_busy"),
                      ("kv_usage", "most_kv_usage")):
        if (v := _most(s, key)) is not None:
            out[name] = v
    slots = _most(s, "slots")
    if slots is not None:
        out["slots"] = int(slots)
    errors = sorted({x.error for x in s if x.error})
    if errors:
        out["errors"] = errors[:3]
    return out


def run(ctx: CheckContext) -> Finding:
    samples = ctx.facts.samples
    series = samples.server if samples is not None else None
    if series is None:
        return CHECK.finding(Status.SKIP, "no engine server was watched (watch --engine-url URL reads its counters)")
    ev = summary(series)
    if series.error or not series.samples:
        return CHECK.finding(Status.SKIP, f"{series.url}: {series.error or 'no reading'}", ev)
    if series.kind == "ollama":
        return CHECK.finding(Status.INFO, f"Ollama at {series.url} keeps no request counters: requests in flight and "
                             "queued cannot be read (its /api/ps lists the loaded models)", ev)
    if "served_tok_s" not in ev and "most_in_flight" not in ev:
        why = "; ".join(ev.get("errors", ())) or "no counters"
        return CHECK.finding(Status.SKIP, f"{series.url}: its counters could not be read ({why})", ev,
                             fix="start llama-server with --metrics (vLLM serves /metrics by default)")
    served = ev.get("served_tok_s")
    each = f", {ev['per_request_tok_s']:g} tok/s per request while decoding" if "per_request_tok_s" in ev else ""
    flight = ev.get("most_in_flight")
    slots = f", {ev['most_slots_busy']:g} of {ev['slots']} slots busy at most" if "most_slots_busy" in ev and "slots" in ev else ""
    said = (f"served {served:g} tok/s in total" if served is not None else "tokens served not read") + each + \
        (f", up to {flight:g} requests in flight" if flight is not None else "") + slots
    queued = ev.get("most_queued") or 0
    if queued > 0:
        return CHECK.finding(Status.WARN, f"queued, not slow: up to {queued:g} requests waited for a free slot; {said}",
                             ev, fix="add slots (each holds its own context in memory) or a second server",
                             commands=FIXES)
    if not flight and not served:
        return CHECK.finding(Status.INFO, f"the server was idle over the window ({said}): send it requests while "
                             "watching to judge it under load", ev)
    return CHECK.finding(Status.PASS, f"no request waited for a slot; {said}", ev)


CHECK = Check(id=CheckId("server-load"), title="Engine server load (requests, slots, tokens served)", run=run, order=60)
