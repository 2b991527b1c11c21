"""An engine server's counters over the watch window (watch --engine-url), reduced to what the live line, the report's
sampled section and the server-load check say: requests in flight and queued, slots busy, tokens served per second.

Served tok/s is the change in generated tokens between two readings over the seconds between them. llama-server adds a
request's generated tokens to tokens_predicted_total only when the request ends (tools/server/server-context.cpp:
metrics_on_prediction runs on the slot's reset), so the tokens its busy slots have generated so far (/slots n_decoded)
are added to it; vLLM counts each step (generation_tokens_total). Sources: llama.cpp tools/server/README.md
(https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md), vLLM's metrics
(https://docs.vllm.ai/en/latest/design/metrics.html).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from statistics import median

from doctor.model.engines import SERVER_LABEL
from doctor.model.samples import GpuSeries, ServerSample, ServerSeries

NO_COUNTERS = {  # what each server without request counters offers instead (the check and the live line say it)
    "ollama": "Ollama keeps no request counters (its /api/ps lists the loaded models and their share in VRAM)",
    "tabbyapi": "TabbyAPI keeps no request counters (a /metrics endpoint is proposed in "
                "https://github.com/theroyallab/tabbyAPI/pull/443, open as of 2026-08)",
    "lm-studio": "LM Studio's server keeps no request counters",
    "openai-compatible": "an OpenAI-compatible API has no request counters of its own",
}


def label(kind: str) -> str:
    return SERVER_LABEL.get(kind, kind or "the server")


def tok_s(value: float) -> str:
    """A speed as the reports print it: "256 tok/s", "64 tok/s", "7.5 tok/s", "0 tok/s" (the evidence keeps more)."""
    return f"{value:,.0f} tok/s" if value >= 10 or value == 0 else f"{value:.1f} tok/s"


def generated(s: ServerSample) -> float | None:
    """Tokens generated since the server started, counting the requests still running where the server shows them."""
    if s.tokens_total is None:
        return None
    return s.tokens_total + (s.tokens_in_progress or 0.0)


def answered(s: ServerSample) -> bool:
    """The server gave at least one counter at this reading."""
    return any(v is not None for v in (s.in_flight, s.queued, s.tokens_total, s.slots_busy))


def served_tok_s(a: ServerSample, b: ServerSample) -> float | None:
    """Tokens generated between two readings, per second; None where either lacks the count."""
    ga, gb = generated(a), generated(b)
    if ga is None or gb is None or b.t_s <= a.t_s:
        return None
    return max(0.0, gb - ga) / (b.t_s - a.t_s)


@dataclass(frozen=True)
class ServerInterval:
    """Between two readings: what the server said at each end, the tokens it served, and the GPU's own figures."""

    t0_s: float
    t1_s: float
    start: ServerSample
    end: ServerSample
    served_tok_s: float | None
    gpu_util_pct: float | None = None  # median of the GPU's samples in the interval
    sm_clock_mhz: float | None = None
    mem_clock_mhz: float | None = None

    @property
    def working(self) -> bool:
        """Requests ran or tokens were served in the interval."""
        return bool(self.start.in_flight or self.end.in_flight or self.start.slots_busy or self.end.slots_busy
                    or self.served_tok_s)


def _median(values: list[float]) -> float | None:
    return median(values) if values else None


def _gpu_beside(out: ServerInterval, gpu: GpuSeries | None) -> ServerInterval:
    inside = [g for g in gpu.samples if out.t0_s <= g.t_s < out.t1_s] if gpu is not None else []
    return replace(out, gpu_util_pct=_median([float(g.util_gpu_pct) for g in inside if g.util_gpu_pct is not None]),
                   sm_clock_mhz=_median([float(g.sm_clock_mhz) for g in inside if g.sm_clock_mhz is not None]),
                   mem_clock_mhz=_median([float(g.mem_clock_mhz) for g in inside if g.mem_clock_mhz is not None]))


def _merged(run: list[ServerInterval]) -> ServerInterval:
    """Consecutive idle intervals as one: nothing ran, so one row says it for the whole stretch."""
    rated = [i.served_tok_s for i in run if i.served_tok_s is not None]
    served = 0.0 if rated else None
    return ServerInterval(run[0].t0_s, run[-1].t1_s, run[0].start, run[-1].end, served)


def intervals(series: ServerSeries, gpu: GpuSeries | None = None, merge_idle: bool = False) -> list[ServerInterval]:
    """Each pair of consecutive readings that both answered, with the GPU's median figures between them; with
    merge_idle, a stretch of intervals where nothing ran is one interval."""
    readings = [s for s in series.samples if answered(s)]
    spans = [ServerInterval(a.t_s, b.t_s, a, b, served_tok_s(a, b)) for a, b in zip(readings, readings[1:])]
    if merge_idle:
        grouped: list[ServerInterval] = []
        run: list[ServerInterval] = []
        for i in spans:
            if i.working:
                if run:
                    grouped.append(_merged(run))
                    run = []
                grouped.append(i)
            else:
                run.append(i)
        spans = grouped + ([_merged(run)] if run else [])
    return [_gpu_beside(i, gpu) for i in spans]


def _span(samples: list[ServerSample], key: str) -> tuple[float, float, float] | None:
    """(first value, last value, seconds between them) of a counter read at two readings or more."""
    seen = [(s.t_s, getattr(s, key)) for s in samples if getattr(s, key) is not None]
    if len(seen) < 2 or seen[-1][0] <= seen[0][0]:
        return None
    return seen[0][1], seen[-1][1], seen[-1][0] - seen[0][0]


def _most(samples: tuple[ServerSample, ...], key: str) -> float | None:
    vals = [getattr(s, key) for s in samples if getattr(s, key) is not None]
    return max(vals) if vals else None


def stopped_answering(series: ServerSeries) -> float | None:
    """When a server that answered stopped answering for the rest of the window (it crashed, hung or was stopped):
    the time of its first silent reading; None while it kept answering."""
    last = max((i for i, s in enumerate(series.samples) if answered(s)), default=None)
    if last is None or last == len(series.samples) - 1:
        return None
    return series.samples[last + 1].t_s


def summary(series: ServerSeries) -> dict:
    """What the window's counters say: tokens served (over the window, over the intervals with work, the busiest
    interval), per-request generation speed, the most requests in flight and waiting, slots busy."""
    s = series.samples
    out: dict = {"url": series.url, "server": series.kind, "readings": len(s)}
    spans = intervals(series)
    rated = [i for i in spans if i.served_tok_s is not None]
    if rated:
        tokens = sum((i.served_tok_s or 0.0) * (i.t1_s - i.t0_s) for i in rated)
        window = rated[-1].t1_s - rated[0].t0_s
        out["tokens_served"] = round(tokens)
        out["served_tok_s"] = round(tokens / window, 2) if window > 0 else 0.0  # over the whole window
        working = [i for i in rated if i.working]
        busy_s = sum(i.t1_s - i.t0_s for i in working)
        if busy_s > 0:
            out["working_s"] = round(busy_s, 2)
            out["working_intervals"] = len(working)
            out["served_tok_s_working"] = round(sum((i.served_tok_s or 0.0) * (i.t1_s - i.t0_s) for i in working) / busy_s, 2)
        out["served_tok_s_peak"] = round(max(i.served_tok_s or 0.0 for i in rated), 2)
        out["interval_s"] = round(median(i.t1_s - i.t0_s for i in rated), 2)
    done = _span([x for x in s if answered(x)], "tokens_total")
    decode = _span([x for x in s if answered(x)], "decode_s_total")
    if done is not None and decode is not None and decode[1] > decode[0]:
        out["per_request_tok_s"] = round(max(0.0, done[1] - done[0]) / (decode[1] - decode[0]), 2)
    for key, name in (("in_flight", "most_in_flight"), ("queued", "most_queued"), ("slots_busy", "most_slots_busy"),
                      ("kv_usage", "most_kv_usage")):
        if (v := _most(s, key)) is not None:
            out[name] = v
    slots = _most(s, "slots")
    if slots is not None:
        out["slots"] = int(slots)
    if (t := stopped_answering(series)) is not None:
        out["stopped_answering_at_s"] = t
    errors = sorted({x.error for x in s if x.error})
    if errors:
        out["errors"] = errors[:3]
    return out


def now_text(s: ServerSample, slots: int | None = None) -> str:
    """One reading, short: "4 in flight, 0 queued, 4/4 slots busy"."""
    parts = []
    if s.in_flight is not None:
        parts.append(f"{s.in_flight:g} in flight")
    if s.queued is not None:
        parts.append(f"{s.queued:g} queued")
    if s.slots_busy is not None:
        parts.append(f"{s.slots_busy}/{s.slots or slots or '?'} slots busy")
    return ", ".join(parts)
