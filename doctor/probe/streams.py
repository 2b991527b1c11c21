"""The concurrency probe: N requests started together against a running engine server (--engine-url, loopback), each
streamed, at each stream count asked (--streams 1,2,4). It measures what a team would see: the total decode speed,
each stream's own, and the time to its first token; a server that batches (llama-server --parallel N, Ollama with
OLLAMA_NUM_PARALLEL, vLLM, TabbyAPI with flash-attn) raises the total, one that takes requests in turn keeps it and
makes the later ones wait.

APIs: OpenAI's /v1/completions streamed (llama-server, vLLM, TabbyAPI, LM Studio; `ignore_eos` asked where the server
takes it, `usage` counted where given, else the streamed chunks), or Ollama's /api/generate streamed (its final
`eval_count`). Sources: https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md,
https://github.com/ollama/ollama/blob/main/docs/api.md. Never raises: what went wrong is StreamsProbe.error.

The HTTP is the --engine-url probe's own client (doctor/probe/served/http.py: a deadline for the whole answer, a size
cap, plain JSON), and the server is identified as that probe does (doctor/probe/served/identify.py).
"""

from __future__ import annotations

import statistics
import threading
import time
from dataclasses import dataclass, replace
from typing import Callable

from doctor.model.streams import StreamsProbe, StreamsRound, StreamTiming
from doctor.probe.more_runs import SETTLE_BUDGET_S, SETTLE_PCT, settled, spread_pct, until_settled
from doctor.probe.served.http import ServerError, stream_json
from doctor.probe.served.identify import base_url, identify, url_problem

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
    runs: int = 3  # each round repeated until the last `runs` totals agree within settle_pct (`probe --runs`)
    settle_pct: float = SETTLE_PCT
    settle_budget_s: float = SETTLE_BUDGET_S  # seconds of extra repeats per round, as the timing probe's


def which_api(base: str) -> tuple[str, str]:
    """("/api/generate", model) for Ollama, ("/v1/completions", model) for an OpenAI-compatible server: the model it
    has loaded, else the one it serves (doctor/probe/served/identify.py, the --engine-url probe's own questions)."""
    server = identify(base)
    if server.problem:
        raise StreamError(server.problem)
    model = (server.loaded or server.models or ("",))[0]
    return ("/api/generate" if server.api == "ollama" else "/v1/completions"), model


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
        for at, event in stream_json(base + api, body, timeout_s, MAX_BYTES):
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
    except ServerError as exc:
        return StreamTiming(chunks, round((first or time.monotonic()) - t0, 4),
                            round((last or time.monotonic()) - t0, 4), exc.problem)
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


def repeated_round(once: Callable[[], StreamsRound], runs: int, settle_pct: float = SETTLE_PCT,
                   budget_s: float = SETTLE_BUDGET_S, clock: Callable[[], float] = time.monotonic) -> StreamsRound:
    """`once()` repeated as the timing probe repeats its runs (doctor/probe/more_runs.py until_settled): `runs`
    times, then more while their totals spread over `settle_pct`, within `budget_s`; a repeat that failed ends it."""
    done: list[StreamsRound] = []

    def total(_index: int) -> float:
        done.append(once())
        return done[-1].total_tok_s

    until_settled(total, runs, settle_pct, budget_s, clock, stop=lambda value: value <= 0 or done[-1].failed > 0)
    return combine_repeats(done, runs, settle_pct, budget_s)


def combine_repeats(done: list[StreamsRound], runs: int, settle_pct: float = SETTLE_PCT,
                    budget_s: float = SETTLE_BUDGET_S) -> StreamsRound:
    """One round from its repeats: each figure the median over the last `runs` of them (the settled window, or
    the last ones when they never settled, which `unsettled` then says), the requests those of the median repeat.
    A repeat that failed is the round's result, as one run's was."""
    totals = tuple(r.total_tok_s for r in done)
    last = done[-1]
    if last.failed or last.total_tok_s <= 0:
        return replace(last, repeats=len(done), totals_tok_s=totals)
    kept = done[-runs:]
    window = [r.total_tok_s for r in kept]
    spread = spread_pct(window)
    mid = sorted(kept, key=lambda r: r.total_tok_s)[(len(kept) - 1) // 2]

    def median(figure: Callable[[StreamsRound], float], places: int) -> float:
        return round(statistics.median(figure(r) for r in kept), places)

    unsettled = "" if settled(list(totals), runs, settle_pct) else (
        f"the {last.streams}-stream totals did not settle: the last {len(kept)} of {len(done)} repeats spread "
        f"{spread:.1f}% ({min(window):g}-{max(window):g} tok/s; target {settle_pct:g}% within {budget_s:g} s of "
        "extra repeats), so its medians are uncertain")
    return StreamsRound(last.streams, mid.requests, median(lambda r: r.total_tok_s, 2),
                        median(lambda r: r.per_stream_tok_s, 2), median(lambda r: r.slowest_stream_tok_s, 2),
                        median(lambda r: r.ttft_median_s, 3), median(lambda r: r.ttft_max_s, 3), failed=0,
                        repeats=len(done), totals_tok_s=totals, window=len(kept), spread_pct=round(spread, 1),
                        unsettled=unsettled)


def probe_streams(url: str, o: StreamsOptions, say: Say = lambda text: None,
                  on_round: Callable[[StreamsRound], None] = lambda r: None) -> StreamsProbe:
    """Warm the server up with one request, then one round per stream count, repeated until its totals settle
    (each round also to `on_round`, so a caller stopped half-way keeps the rounds finished)."""
    started = time.monotonic()
    if problem := url_problem(url):
        return StreamsProbe(url, "", "", o.tokens, error=problem)
    base = base_url(url)
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
        rounds.append(repeated_round(lambda: one_round(base, api, model, n, o), o.runs, o.settle_pct,
                                     o.settle_budget_s))
        on_round(rounds[-1])
    return StreamsProbe(probe.url, api, model, o.tokens, tuple(rounds), seconds=round(time.monotonic() - started, 2))
