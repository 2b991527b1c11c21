"""The concurrency probe: N requests started together against a running engine server (--engine-url, loopback), each
streamed, at each stream count asked (--streams 1,2,4). It measures what a team would see: the total decode speed,
each stream's own, and the time to its first token; a server that batches (llama-server --parallel N, Ollama with
OLLAMA_NUM_PARALLEL, vLLM, TabbyAPI with flash-attn) raises the total, one that takes requests in turn keeps it and
makes the later ones wait.

APIs: OpenAI's /v1/completions streamed (llama-server, vLLM, TabbyAPI, LM Studio; `ignore_eos` asked where the server
takes it, `usage` counted where given, else the streamed chunks), or Ollama's /api/generate streamed (its final
`eval_count`). Sources: https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md,
https://github.com/ollama/ollama/blob/main/docs/api.md. Never raises: what went wrong is StreamsProbe.error.

The HTTP here is a plain streaming POST with a deadline and a size cap; it is meant to fold into the engine-server
client of doctor/probe/served/ (issue 35's --engine-url probe) once that is on main: one client for both.
"""

from __future__ import annotations

import json
import socket
import statistics
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from doctor.facts.engines.servers import NotLoopback, loopback_url
from doctor.model.streams import StreamsProbe, StreamsRound, StreamTiming

PROMPT = "Count from one to one thousand in words, separated by commas: one, two, three, four, five, six, seven,"
MAX_BYTES = 8 * 1024 * 1024  # a few hundred tokens streamed are tens of KiB
Say = Callable[[str], None]


class StreamError(Exception):
    pass


@dataclass(frozen=True)
class StreamsOptions:
    counts: tuple[int, ...] = (1, 2, 4)
    tokens: int = 128
    request_s: float = 300.0  # one request, whole answer (the first one may load the model)
    model: str = ""  # "": the one the server has loaded (or its only one)


def _post_lines(url: str, body: dict, timeout_s: float) -> Iterator[tuple[float, Any]]:
    """(monotonic arrival time, JSON event) for each `data: {...}` (OpenAI) or JSON line (Ollama) of a streamed POST."""
    end = time.monotonic() + timeout_s
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json", "User-Agent": "v100-doctor"})
    try:
        resp = urllib.request.urlopen(req, timeout=timeout_s)  # noqa: S310 - loopback http only (loopback_url)
    except urllib.error.HTTPError as exc:
        raise StreamError(f"{url} answered HTTP {exc.code}: {exc.read(300).decode('utf-8', 'replace').strip()}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise StreamError(f"cannot reach {url}: {getattr(exc, 'reason', exc)}") from None
    size, buffer = 0, b""
    with resp:
        while True:
            if time.monotonic() > end:
                raise StreamError(f"{url} did not finish within {timeout_s:g} s")
            try:
                chunk = resp.read1(65536) if hasattr(resp, "read1") else resp.read(65536)
            except (socket.timeout, TimeoutError, OSError) as exc:
                raise StreamError(f"{url} stopped streaming: {exc}") from None
            now = time.monotonic()
            size += len(chunk)
            if size > MAX_BYTES:
                raise StreamError(f"{url} streamed more than {MAX_BYTES >> 20} MiB for {body.get('max_tokens', '')} tokens")
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                text = line.strip()
                if text.startswith(b"data:"):
                    text = text[5:].strip()
                if not text or text.startswith((b":", b"event:")):
                    continue
                if text == b"[DONE]":
                    return
                try:
                    yield now, json.loads(text)
                except ValueError:
                    raise StreamError(f"{url} streamed a line that is not JSON: {text[:80]!r}") from None
            if not chunk:
                return


def _get_json(url: str, timeout_s: float = 5.0) -> Any:
    req = urllib.request.Request(url, headers={"User-Agent": "v100-doctor"})
    with urllib.request.urlopen(req, timeout=timeout_s) as resp:  # noqa: S310 - loopback http only (loopback_url)
        return json.loads(resp.read(MAX_BYTES))


def which_api(base: str) -> tuple[str, str]:
    """("/api/generate", model) for Ollama, ("/v1/completions", model) for an OpenAI-compatible server; the model
    loaded (Ollama /api/ps) or listed (/v1/models; Ollama /api/tags when it holds one)."""
    try:
        ps = _get_json(f"{base}/api/ps")
        if isinstance(ps, dict) and "models" in ps:
            loaded = [m.get("name", "") for m in ps.get("models") or () if isinstance(m, dict)]
            if not loaded:
                tags = _get_json(f"{base}/api/tags")
                loaded = [m.get("name", "") for m in (tags.get("models") or ()) if isinstance(m, dict)]
            return "/api/generate", (loaded[0] if loaded else "")
    except (OSError, ValueError, urllib.error.URLError):
        pass
    try:
        doc = _get_json(f"{base}/v1/models")
        data = doc.get("data") if isinstance(doc, dict) else None
        names = [m.get("id", "") for m in data or () if isinstance(m, dict)]
        return "/v1/completions", (names[0] if names else "")
    except (OSError, ValueError, urllib.error.URLError) as exc:
        raise StreamError(f"{base} answers neither Ollama's /api/ps nor OpenAI's /v1/models ({exc}); --engine-url must "
                          "name a running engine server") from None


def one_stream(base: str, api: str, model: str, tokens: int, timeout_s: float, t0: float) -> StreamTiming:
    """One streamed request; its first and last token's times are seconds after t0."""
    if api == "/api/generate":
        body: dict = {"model": model, "prompt": PROMPT, "raw": True, "stream": True,
                      "options": {"num_predict": tokens, "temperature": 0}}
    else:
        body = {"model": model, "prompt": PROMPT, "max_tokens": tokens, "temperature": 0, "stream": True,
                "ignore_eos": True, "stream_options": {"include_usage": True}}
    first = last = None
    chunks, counted = 0, None
    try:
        for at, event in _post_lines(base + api, body, timeout_s):
            if not isinstance(event, dict):
                continue
            if api == "/api/generate":
                text = event.get("response") or ""
                if event.get("done") and isinstance(event.get("eval_count"), int):
                    counted = event["eval_count"]
            else:
                choice = (event.get("choices") or [{}])[0] if isinstance(event.get("choices"), list) else {}
                text = (choice or {}).get("text") or ""
                usage = event.get("usage")
                if isinstance(usage, dict) and isinstance(usage.get("completion_tokens"), int):
                    counted = usage["completion_tokens"]
            if text:
                chunks += 1
                first = at if first is None else first
                last = at
    except StreamError as exc:
        return StreamTiming(chunks, round((first or time.monotonic()) - t0, 4),
                            round((last or time.monotonic()) - t0, 4), str(exc))
    if first is None or last is None:
        return StreamTiming(0, 0.0, 0.0, f"{base + api} streamed no text for model {model!r}")
    return StreamTiming(max(counted or 0, chunks), round(first - t0, 4), round(last - t0, 4))


def one_round(base: str, api: str, model: str, streams: int, o: StreamsOptions) -> StreamsRound:
    """`streams` requests released together; the round's total, per-stream and first-token figures."""
    out: list[StreamTiming | None] = [None] * streams
    gate = threading.Barrier(streams + 1)
    t0_box: list[float] = []

    def work(i: int) -> None:
        gate.wait()
        out[i] = one_stream(base, api, model, o.tokens, o.request_s, t0_box[0])

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(streams)]
    for t in threads:
        t.start()
    t0_box.append(time.monotonic())
    gate.wait()
    for t in threads:
        t.join(o.request_s + 5)
    done = tuple(x if x is not None else StreamTiming(0, 0.0, 0.0, "no answer in time") for x in out)
    return summarize_round(streams, done)


def summarize_round(streams: int, done: tuple[StreamTiming, ...]) -> StreamsRound:
    good = [r for r in done if not r.error and r.tokens > 1]
    if not good:
        return StreamsRound(streams, done, 0.0, 0.0, 0.0, 0.0, 0.0, failed=len(done))
    span = max(r.end_s for r in good) - min(r.ttft_s for r in good)
    total = sum(r.tokens - 1 for r in good) / span if span > 0 else 0.0
    own = [r.decode_tok_s for r in good]
    ttft = [r.ttft_s for r in good]
    return StreamsRound(streams, done, round(total, 2), round(statistics.median(own), 2), round(min(own), 2),
                        round(statistics.median(ttft), 3), round(max(ttft), 3), failed=len(done) - len(good))


def probe_streams(url: str, o: StreamsOptions, say: Say = lambda text: None) -> StreamsProbe:
    """Warm the server up with one request, then one round per stream count."""
    started = time.monotonic()
    try:
        base = loopback_url(url)
    except NotLoopback as exc:
        return StreamsProbe(url, "", "", o.tokens, error=str(exc))
    try:
        api, model = which_api(base)
    except StreamError as exc:
        return StreamsProbe(base, "", "", o.tokens, error=str(exc))
    model = o.model or model
    probe = StreamsProbe(base, api, model, o.tokens)
    say(f"warming up {base}{api} ({model or 'its model'}) ...")
    warm = one_stream(base, api, model, min(16, o.tokens), o.request_s, time.monotonic())
    if warm.error or warm.tokens == 0:
        return StreamsProbe(base, api, model, o.tokens, error=warm.error or "the warm-up request streamed no text",
                            seconds=round(time.monotonic() - started, 2))
    rounds = []
    for n in o.counts:
        say(f"{n} concurrent stream{'s' if n > 1 else ''} of {o.tokens} tokens ...")
        rounds.append(one_round(base, api, model, n, o))
    return StreamsProbe(probe.url, api, model, o.tokens, tuple(rounds), seconds=round(time.monotonic() - started, 2))
