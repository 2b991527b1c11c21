"""`server-load`: the engine server's own counters over the watch window (watch --engine-url), beside NVML: requests
in flight, requests waiting for a slot, tokens served per second, slots busy. It tells "slow" from "queued": a request
that waited for a slot is slow to its user while every running one decodes at full speed.

Counters: llama-server's /metrics (started with --metrics: requests_processing, requests_deferred,
tokens_predicted_total, tokens_predicted_seconds_total) and /slots (is_processing, n_decoded); vLLM's /metrics
(num_requests_running, num_requests_waiting, generation_tokens_total). Ollama, TabbyAPI and LM Studio keep no such
counters (info). A server that answered and then stopped answering for the rest of the window fails: it crashed, hung
or was stopped under load. The arithmetic is doctor/model/server_summary.py's, shared with the report and watch's
live line.
Sources: https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md ;
https://docs.vllm.ai/en/latest/design/metrics.html
"""

from __future__ import annotations

from checks.base import Check, CheckContext
from doctor.model.findings import Finding, Status
from doctor.model.ids import CheckId
from doctor.model.server_summary import NO_COUNTERS, label, summary, tok_s

FIXES = ("llama-server: --parallel N -c <N x the context each user needs> (each slot holds its own context)",
         "Ollama: OLLAMA_NUM_PARALLEL=N; vLLM: --max-num-seqs N, with the memory for N sequences")


def _said(ev: dict) -> str:
    """The counters in one clause: requests and slots at their most, tokens served, per-request speed."""
    parts = []
    if "most_in_flight" in ev:
        slots = (f" ({ev['most_slots_busy']:g} of {ev['slots']} slots busy)"
                 if "most_slots_busy" in ev and "slots" in ev else "")
        parts.append(f"up to {ev['most_in_flight']:g} requests in flight{slots}")
    if "served_tok_s_working" in ev:
        peak = (f" (peak {tok_s(ev['served_tok_s_peak'])} over {ev['interval_s']:g} s)"
                if ev["working_intervals"] > 1 else "")
        parts.append(f"{tok_s(ev['served_tok_s_working'])} served over the {ev['working_s']:.0f} s with work{peak}")
    elif "served_tok_s" in ev:
        parts.append(f"{tok_s(ev['served_tok_s'])} served")
    if "per_request_tok_s" in ev:
        parts.append(f"{tok_s(ev['per_request_tok_s'])} per request while generating (the server's own timing)")
    return ", ".join(parts) or "no counters read"


def run(ctx: CheckContext) -> Finding:
    samples = ctx.facts.samples
    series = samples.server if samples is not None else None
    if series is None:
        return CHECK.finding(Status.SKIP, "no engine server was watched (watch --engine-url URL reads its counters)")
    ev = summary(series)
    if series.error or not series.samples:
        return CHECK.finding(Status.SKIP, f"{series.url}: {series.error or 'no reading'}", ev)
    if series.kind in NO_COUNTERS:
        return CHECK.finding(Status.INFO, f"{NO_COUNTERS[series.kind]}: requests in flight and queued at {series.url} "
                             "cannot be read; the GPU's own figures in the sampled section still apply", ev)
    if "served_tok_s" not in ev and "most_in_flight" not in ev:
        why = "; ".join(ev.get("errors", ())) or "no counters"
        return CHECK.finding(Status.SKIP, f"{series.url}: its counters could not be read ({why})", ev,
                             fix="start llama-server with --metrics (vLLM serves /metrics by default)")
    said = _said(ev)
    if (stopped := ev.get("stopped_answering_at_s")) is not None:
        return CHECK.finding(Status.FAIL, f"{label(series.kind)} at {series.url} stopped answering at {stopped:g} s of the "
                             f"window and never answered again (it crashed, hung or was stopped); before that: {said}", ev,
                             fix="read the server's own log for why it stopped, restart it, and watch again")
    queued = ev.get("most_queued") or 0
    if queued > 0:
        return CHECK.finding(Status.WARN, f"queued, not slow: up to {queued:g} requests waited for a free slot; {said}",
                             ev, fix="add slots (each holds its own context in memory) or a second server",
                             commands=FIXES)
    if not ev.get("most_in_flight") and not ev.get("served_tok_s"):
        return CHECK.finding(Status.INFO, f"the server was idle over the window ({said}): send it requests while "
                             "watching to judge it under load", ev)
    return CHECK.finding(Status.PASS, f"no request waited for a slot; {said}", ev)


CHECK = Check(id=CheckId("server-load"), title="Engine server load (requests, slots, tokens served)", run=run, order=60)
