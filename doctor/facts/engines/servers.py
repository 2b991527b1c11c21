"""Read a running llama-server or Ollama server, read-only and on loopback only: what `watch` shows for an engine.

llama-server: /metrics (Prometheus text; only when started with --metrics) and /slots (JSON; on by default in recent
builds); vLLM: /metrics (vllm:num_requests_running, vllm:num_requests_waiting, vllm:generation_tokens_total;
https://docs.vllm.ai/en/latest/design/metrics.html); Ollama: /api/ps (the loaded models and how much of each is in
VRAM; no counters of requests). The Prometheus text is read by prometheus_client's own parser. Sources: llama.cpp
tools/server/README.md (https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md), Ollama docs/api.md
(https://github.com/ollama/ollama/blob/main/docs/api.md#list-running-models). Nothing is ever sent but a GET.
"""

from __future__ import annotations

import ipaddress
import json
import math
import socket
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Callable

from prometheus_client.parser import text_string_to_metric_families

from doctor.model.samples import ServerSample, ServerSeries
from doctor.model.server_summary import NO_COUNTERS, label

TIMEOUT_S = 2.0
MAX_BYTES = 1 << 20


class NotLoopback(ValueError):
    """The doctor only reads servers on this machine's loopback interface."""


@dataclass(frozen=True)
class ServerReading:
    url: str
    kind: str  # llama-server | vllm | ollama | tabbyapi | lm-studio | openai-compatible (these last: no counters)
    metrics: dict[str, float] = field(default_factory=dict)  # /metrics, names without the llamacpp: or vllm: prefix
    slots: tuple[dict, ...] = ()  # llama-server /slots: id, n_ctx, is_processing, n_decoded
    models: tuple[dict, ...] = ()  # Ollama /api/ps: name, size, size_vram, vram_share
    error: str = ""


def loopback_url(url: str) -> str:
    """The URL if it names a loopback host (127.0.0.0/8, ::1, localhost), else NotLoopback naming the fix."""
    parts = urllib.parse.urlsplit(url if "://" in url else f"http://{url}")
    host = parts.hostname or ""
    try:
        ok = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        ok = False
    if parts.scheme != "http" or not ok:
        raise NotLoopback(f"{url}: the doctor reads engine servers only on loopback over http (e.g. http://127.0.0.1:8080); "
                          "run it on the server's machine")
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, "", "", ""))


def parse_prometheus(text: str) -> dict[str, float]:
    """Every sample of a Prometheus text page by its name, the label sets summed (vLLM labels each by model_name);
    {} for a page prometheus_client cannot parse."""
    out: dict[str, float] = {}
    try:
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if math.isfinite(sample.value):
                    out[sample.name] = out.get(sample.name, 0.0) + float(sample.value)
    except (ValueError, TypeError, IndexError):
        return {}
    return out


def parse_metrics(text: str) -> dict[str, float]:
    """llama-server's Prometheus text: `llamacpp:predicted_tokens_seconds 31.2` -> {"predicted_tokens_seconds": 31.2}."""
    return {k.split(":", 1)[1]: v for k, v in parse_prometheus(text).items() if k.startswith("llamacpp:")}


def parse_vllm(text: str) -> dict[str, float]:
    """vLLM's /metrics without its prefix: {"num_requests_running": 2, "generation_tokens_total": 812, ...}."""
    return {k.split(":", 1)[1]: v for k, v in parse_prometheus(text).items() if k.startswith("vllm:")}


def parse_ps(doc: dict) -> tuple[dict, ...]:
    """Ollama's /api/ps: each model's size and the share of it in VRAM (below 1: part runs on the CPU)."""
    rows = []
    for m in doc.get("models") or ():
        size, vram = int(m.get("size") or 0), int(m.get("size_vram") or 0)
        rows.append({"name": m.get("name", "?"), "size": size, "size_vram": vram,
                     "vram_share": round(vram / size, 3) if size else None, "context_length": m.get("context_length")})
    return tuple(rows)


def _get(url: str) -> tuple[int, str]:
    req = urllib.request.Request(url, method="GET", headers={"User-Agent": "v100-doctor"})
    with urllib.request.urlopen(req, timeout=TIMEOUT_S) as resp:  # noqa: S310 - loopback http only (loopback_url)
        return resp.status, resp.read(MAX_BYTES).decode("utf-8", "replace")


def read_server(url: str, get: Callable[[str], tuple[int, str]] = _get, flavour: str = "") -> ServerReading:
    """One reading of the server at `url` (loopback only), by the endpoints of the flavour it answered as (identify's
    llama-server, vllm, ollama, tabbyapi, lm-studio, openai-compatible; guessed from the endpoints when ""); what
    cannot be read is said in `error`."""
    base = loopback_url(url)
    if flavour in ("", "ollama"):
        try:
            status, body = get(f"{base}/api/ps")
            if status == 200 and body.lstrip().startswith("{") and '"models"' in body:
                return ServerReading(base, "ollama", models=parse_ps(json.loads(body)))
        except (OSError, ValueError, socket.timeout) as exc:
            if flavour == "ollama":
                return ServerReading(base, "ollama", error=f"/api/ps: {exc}")
        if flavour == "ollama":
            return ServerReading(base, "ollama", error="/api/ps did not answer with the loaded models")
    errors = []
    metrics: dict[str, float] = {}
    slots: tuple[dict, ...] = ()
    try:
        status, body = get(f"{base}/metrics")
        metrics = parse_metrics(body) if status == 200 else {}
        if not metrics and status == 200 and (vllm := parse_vllm(body)):
            return ServerReading(base, "vllm", metrics=vllm)
        if not metrics and flavour == "vllm":
            return ServerReading(base, "vllm", error=f"/metrics answered {status} without vLLM's counters")
        if not metrics and flavour in NO_COUNTERS:
            return ServerReading(base, flavour, error=NO_COUNTERS[flavour])
        if not metrics:
            errors.append("no /metrics (start llama-server with --metrics)")
    except (OSError, ValueError) as exc:
        errors.append(f"/metrics: {exc}")
        if flavour and flavour != "llama-server":
            return ServerReading(base, flavour, error="; ".join(errors))
    try:
        status, body = get(f"{base}/slots")
        data = json.loads(body) if status == 200 else []
        slots = tuple({"id": s.get("id"), "n_ctx": s.get("n_ctx"), "is_processing": s.get("is_processing"),
                       "n_decoded": _n_decoded(s)} for s in data if isinstance(s, dict))
    except (OSError, ValueError) as exc:
        errors.append(f"/slots: {exc}")
    return ServerReading(base, "llama-server", metrics=metrics, slots=slots, error="; ".join(errors))


def _n_decoded(slot: dict) -> float | None:
    """Tokens a slot's request has generated so far: /slots' next_token[0].n_decoded (older builds: n_decoded)."""
    nxt = slot.get("next_token")
    first = nxt[0] if isinstance(nxt, list) and nxt and isinstance(nxt[0], dict) else slot
    value = first.get("n_decoded")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def counters(r: ServerReading, t_s: float) -> ServerSample:
    """The reading as one sample of the window: requests in flight and waiting, generated tokens so far (finished
    requests, and the running ones' tokens where /slots shows them), slots busy."""
    m = r.metrics
    if r.kind == "vllm":
        return ServerSample(t_s, in_flight=m.get("num_requests_running"), queued=m.get("num_requests_waiting"),
                            tokens_total=m.get("generation_tokens_total"),
                            kv_usage=m.get("kv_cache_usage_perc", m.get("gpu_cache_usage_perc")), error=r.error)
    if r.kind != "llama-server":
        return ServerSample(t_s, error=r.error or NO_COUNTERS.get(r.kind, "no request counters"))
    busy = [x for x in r.slots if x.get("is_processing")]
    running = [x["n_decoded"] for x in busy if x.get("n_decoded") is not None]
    return ServerSample(t_s, in_flight=m.get("requests_processing"), queued=m.get("requests_deferred"),
                        tokens_total=m.get("tokens_predicted_total"), decode_s_total=m.get("tokens_predicted_seconds_total"),
                        slots_busy=len(busy) if r.slots else None, slots=len(r.slots) or None,
                        kv_usage=m.get("kv_cache_usage_ratio"), error=r.error,
                        tokens_in_progress=float(sum(running)) if r.slots and "tokens_predicted_total" in m else None)


def series(url: str, readings: list[tuple[float, ServerReading]], kind: str = "") -> ServerSeries:
    """The window's readings as the report keeps them (facts.samples.server); `kind` is the flavour the server
    answered as, where it was identified."""
    if not readings:
        return ServerSeries(url, kind or "openai-compatible", error="the server was not read")
    last = readings[-1][1]
    if kind in ("", "openai-compatible"):  # the endpoints it answered say more than /v1/models did
        kind = next((r.kind for _, r in reversed(readings) if r.kind != "llama-server" or r.metrics), last.kind)
    return ServerSeries(last.url, kind, tuple(counters(r, t) for t, r in readings), last.models)


def describe(r: ServerReading) -> list[str]:
    """One line per server, for `watch`'s stderr at the window's start and end: what it is doing now, and its own
    totals since it started (each figure named for what it is)."""
    if r.kind == "ollama":
        if r.error:
            return [f"Ollama at {r.url}: {r.error}"]
        if not r.models:
            return [f"Ollama at {r.url}: no model loaded"]
        return [f"Ollama at {r.url}: {m['name']} {m['size'] / 1e9:.1f} GB, "
                + (f"{m['vram_share']:.0%} in VRAM" if m["vram_share"] is not None else "VRAM share unknown")
                + ("" if (m["vram_share"] or 0) >= 1 else ": the rest runs on the CPU, at host memory speed")
                for m in r.models]
    m = r.metrics
    name = label(r.kind)
    if r.kind == "vllm":
        if not m:
            return [f"vLLM at {r.url}: nothing read ({r.error or 'no /metrics'})"]
        return [f"vLLM at {r.url}: {m.get('num_requests_running', 0):g} requests running, "
                f"{m.get('num_requests_waiting', 0):g} waiting; {m.get('generation_tokens_total', 0):,.0f} tokens "
                "generated since it started (generation_tokens_total)"]
    if r.kind != "llama-server":
        if r.kind in NO_COUNTERS and (not r.error or r.error == NO_COUNTERS[r.kind]):
            return [f"{NO_COUNTERS[r.kind]} (at {r.url})"]
        return [f"{name} at {r.url}: {r.error or 'no request counters'}"]
    parts = []
    if "requests_processing" in m:
        parts.append(f"{m['requests_processing']:g} requests processing, {m.get('requests_deferred', 0):g} deferred")
    if r.slots:
        parts.append(f"{sum(1 for s in r.slots if s.get('is_processing'))}/{len(r.slots)} slots busy (n_ctx "
                     f"{r.slots[0].get('n_ctx')} each)")
    if "kv_cache_usage_ratio" in m:
        parts.append(f"KV cache {m['kv_cache_usage_ratio']:.0%} used")
    tokens, secs = m.get("tokens_predicted_total"), m.get("tokens_predicted_seconds_total")
    if tokens is not None and secs:
        parts.append(f"since it started: {tokens:,.0f} tokens generated by finished requests, {tokens / secs:.1f} tok/s "
                     "per request while generating (tokens_predicted_total / tokens_predicted_seconds_total)")
    elif tokens is not None:
        parts.append("since it started: no request has finished")
    if m.get("predicted_tokens_seconds"):
        parts.append(f"{m['predicted_tokens_seconds']:.1f} tok/s per request over the requests finished since the "
                     "previous /metrics read (predicted_tokens_seconds)")
    prompt, prompt_s = m.get("prompt_tokens_total"), m.get("prompt_seconds_total")
    if prompt and prompt_s:
        parts.append(f"prompt processing {prompt / prompt_s:,.0f} tok/s since it started")
    text = f"llama-server at {r.url}: " + ("; ".join(parts) if parts else "nothing read")
    return [text + (f" ({r.error})" if r.error else "")]
