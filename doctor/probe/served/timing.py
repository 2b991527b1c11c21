"""Time a running engine server's decode through its own API (--engine-url): a warm-up request (it loads the model
when it was not loaded), then `runs` requests of `tokens` tokens, more while they spread over 10%, each timed by the
server's own decode counters where it gives them (Ollama's eval_count / eval_duration, llama-server's `timings`)
and else by the wall clock between the first and the last streamed token. NVML is sampled while it runs when the
server is on this host. Never raises: what went wrong is the ServerProbe's outcome and error, in one line."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, replace
from typing import Any, Callable

from doctor.model.engine_probe import LlamaCppRun, ServerProbe
from doctor.model.engines import EngineServer
from doctor.probe.llamacpp import gpu_summary, summarize
from doctor.probe.served.http import ServerError, request_json, stream_json

# a prompt that a base or chat model continues for a long time without a template (raw), so EOS seldom cuts a run
PROMPT = "Count from one to one thousand in words, separated by commas: one, two, three, four, five, six, seven,"
FLAG_SPREAD_PCT = 10.0  # the runs spread more than this: more runs, as the ExLlamaV2 probe does
MIN_TOKENS = 8  # a run that decoded fewer (EOS at once) measures the request, not decode


@dataclass(frozen=True)
class ServerOptions:
    tokens: int = 128
    runs: int = 3
    gpu_index: int = 0
    warmup_s: float = 300.0  # the first request loads the model: a 27B from disk takes a minute or two
    run_s: float = 120.0  # one timed request, whole answer
    ask_s: float = 5.0  # one metadata request
    more_runs: int = 6  # at most this many runs beyond `runs` while the spread stays over the flag line
    settle_s: float = 45.0  # and at most this long


Say = Callable[[str], None]


def time_server(server: EngineServer, o: ServerOptions, sampler: Callable[[int, int], Any] | None = None,
                say: Say = lambda text: None) -> ServerProbe:
    """The server's decode, timed; its outcome says what went wrong when it could not be."""
    started = time.monotonic()
    base = ServerProbe(backend=f"{server.label}" + (f" {server.version}" if server.version else ""), outcome="error",
                       url=server.url, flavour=server.flavour, tokens=o.tokens, local=server.local, asked_runs=o.runs)
    if server.problem:
        return replace(base, outcome=_outcome_of(server.problem), error=server.problem)
    model = _model(server)
    if not model:
        return replace(base, outcome="no-model", error=_no_model(server))
    base = replace(base, model=model)
    way = _Ollama(server, model, o) if server.api == "ollama" else _OpenAi(server, model, o)
    series_box: list[Any] = []
    s = sampler(o.gpu_index, os.getpid()) if sampler is not None and server.local else None
    mono0 = time.monotonic()
    runs: list[LlamaCppRun] = []
    try:
        say(f"warming up {server.label} at {server.url} on {model} (loads it if it was not loaded) ...")
        t = time.monotonic()
        first = way.run(o.warmup_s)
        base = replace(base, warmup_s=round(time.monotonic() - t, 2), clock=first.clock, backend=base.backend + way.path)
        say(f"timing {o.runs} runs of {o.tokens} tokens ({'the server' if first.clock == 'server' else 'the wall'}'s clock) ...")
        deadline = time.monotonic() + o.settle_s
        while len(runs) < o.runs or (_spread(runs[-o.runs:]) > FLAG_SPREAD_PCT and len(runs) < o.runs + o.more_runs
                                     and time.monotonic() < deadline):
            timed = way.run(o.run_s)
            runs.append(LlamaCppRun(timed.tokens, round(timed.tok_s, 2), timed.server_tok_s,
                                    round(timed.t0 - mono0, 3), round(timed.t1 - mono0, 3)))
            base = replace(base, prompt_tokens=timed.prompt_tokens or base.prompt_tokens,
                           prompt_tok_s=timed.prompt_tok_s or base.prompt_tok_s)
        base = replace(base, outcome="ok", **way.loaded())
    except ServerError as err:
        base = replace(base, outcome=err.outcome if runs or err.outcome != "error" else "error",
                       error=_one_line(err, server), log_tail=err.body)
    finally:
        if s is not None:
            series_box.append(s.stop())
    probe = summarize(base, runs, o.runs) if runs else base
    if series_box:
        probe = replace(probe, **gpu_summary(series_box[0], o.gpu_index, runs))
    return replace(probe, seconds=round(time.monotonic() - started, 2))


def _outcome_of(problem: str) -> str:
    low = problem.lower()
    return ("unreachable" if "cannot reach" in low or "not an http" in low or "port is not" in low else
            "timeout" if "did not answer" in low else "bad-answer" if "not json" in low or "mib" in low else "wrong-api")


def _one_line(err: ServerError, server: EngineServer) -> str:
    if err.outcome == "error":
        return f"{server.label} answered the timed request with an error: {err.problem}"
    if err.outcome == "timeout":
        return f"{err.problem}; a server this slow is busy or swapping: run again when it is idle"
    return f"{err.problem}; --engine-url must name an engine's server that answers its API"


def _model(server: EngineServer) -> str:
    if server.loaded:
        return server.loaded[0]
    return server.models[0] if len(server.models) == 1 else ""


def _no_model(server: EngineServer) -> str:
    if not server.models:
        return f"{server.label} at {server.url} serves no model: pull or load one (`ollama pull NAME`, `lms load NAME`)"
    return (f"{server.label} at {server.url} serves {len(server.models)} models and has none loaded: load the one to "
            f"time (`ollama run {server.models[0]}`), then run the doctor again")


def _spread(runs: list[LlamaCppRun]) -> float:
    speeds = sorted(r.tok_s_wall for r in runs)
    if len(speeds) < 2:
        return 0.0
    mid = speeds[len(speeds) // 2]
    return 100.0 * (speeds[-1] - speeds[0]) / mid if mid else 0.0


@dataclass(frozen=True)
class Timed:
    tokens: int
    tok_s: float  # the figure used: the server's own clock where it gave one
    server_tok_s: float | None
    clock: str
    t0: float
    t1: float
    prompt_tokens: int = 0
    prompt_tok_s: float | None = None


def _number(doc: dict, key: str, url: str, positive: bool = True) -> float:
    value = doc.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (positive and value <= 0):
        raise ServerError("bad-answer", f"{url} answered {key}={value!r}, not a positive number as its API promises")
    return float(value)


class _Ollama:
    """Ollama's /api/generate with stream=false: eval_count tokens in eval_duration ns, its own decode clock."""

    path = " (/api/generate)"

    def __init__(self, server: EngineServer, model: str, o: ServerOptions) -> None:
        self.server, self.model, self.o = server, model, o

    def run(self, timeout_s: float) -> Timed:
        url = f"{self.server.url}/api/generate"
        body = {"model": self.model, "prompt": PROMPT, "raw": True, "stream": False,
                "options": {"num_predict": self.o.tokens, "temperature": 0, "seed": 0}}
        t0 = time.monotonic()
        doc = request_json(url, body, timeout_s=timeout_s)
        t1 = time.monotonic()
        if not isinstance(doc, dict):
            raise ServerError("bad-answer", f"{url} answered {type(doc).__name__}, not Ollama's generate object")
        if isinstance(doc.get("error"), str):
            raise ServerError("error", doc["error"][:200])
        count, ns = _number(doc, "eval_count", url), _number(doc, "eval_duration", url)
        if count < MIN_TOKENS:
            raise ServerError("error", f"the model stopped after {count:g} tokens (asked {self.o.tokens}); time a "
                              "model that continues text (a base or chat model, not an embedding model)")
        rate = count / (ns / 1e9)
        p_count, p_ns = doc.get("prompt_eval_count"), doc.get("prompt_eval_duration")
        p_rate = (p_count / (p_ns / 1e9) if isinstance(p_count, int) and isinstance(p_ns, int) and p_ns > 0 else None)
        return Timed(int(count), rate, round(rate, 2), "server", t0, t1, p_count if isinstance(p_count, int) else 0,
                     round(p_rate, 1) if p_rate else None)

    def loaded(self) -> dict[str, Any]:
        """What Ollama says of the model now: /api/ps (size, size_vram, context_length), /api/tags (the file's size),
        /api/show (its PARAMETER lines and details)."""
        out: dict[str, Any] = {}
        url, ask = self.server.url, self.o.ask_s
        try:
            ps = request_json(f"{url}/api/ps", timeout_s=ask)
            row = _row(ps, "models", "name", self.model)
            if row:
                out.update(resident_bytes=_int(row.get("size")), vram_bytes=_int(row.get("size_vram")),
                           n_ctx=_int(row.get("context_length")))
            tags = request_json(f"{url}/api/tags", timeout_s=ask)
            tag = _row(tags, "models", "name", self.model)
            if tag:
                out["model_bytes"] = _int(tag.get("size"))
            show = request_json(f"{url}/api/show", {"model": self.model}, timeout_s=ask)
            if isinstance(show, dict):
                params = _parameters(show.get("parameters"))
                out["parameters"] = params
                details = _dict(show.get("details"))
                out["details"] = {k: str(details[k])[:80] for k in ("quantization_level", "parameter_size", "format",
                                                                     "family") if isinstance(details.get(k), str)}
                if out.get("n_ctx") is None and params.get("num_ctx", "").isdigit():
                    out["n_ctx"] = int(params["num_ctx"])
        except ServerError:
            pass  # the timing stands; what was not read stays unknown
        return out


class _OpenAi:
    """/v1/completions with max_tokens: the server's `timings` (llama-server) where it gives them, else the wall clock
    of a streamed answer between its first and last token."""

    def __init__(self, server: EngineServer, model: str, o: ServerOptions) -> None:
        self.server, self.model, self.o = server, model, o
        self.stream: bool | None = None  # decided by the warm-up: no `timings` in its answer, stream the runs
        self.path = " (/v1/completions)"

    def _body(self, stream: bool) -> dict:
        body: dict[str, Any] = {"model": self.model, "prompt": PROMPT, "max_tokens": self.o.tokens, "temperature": 0,
                                "stream": stream, "ignore_eos": True}
        if stream:
            body["stream_options"] = {"include_usage": True}
        return body

    def run(self, timeout_s: float) -> Timed:
        url = f"{self.server.url}/v1/completions"
        if not self.stream:
            t0 = time.monotonic()
            doc = request_json(url, self._body(False), timeout_s=timeout_s)
            t1 = time.monotonic()
            if not isinstance(doc, dict) or not isinstance(doc.get("choices"), list):
                raise ServerError("bad-answer", f"{url} answered without `choices`: not an OpenAI-compatible completion")
            timings = doc.get("timings")
            if isinstance(timings, dict) and "predicted_n" in timings:
                n, ms = _number(timings, "predicted_n", url), _number(timings, "predicted_ms", url)
                if n < MIN_TOKENS:
                    raise ServerError("error", f"the model stopped after {n:g} tokens (asked {self.o.tokens})")
                self.stream = False
                rate = n / (ms / 1000)
                pn, pms = timings.get("prompt_n"), timings.get("prompt_ms")
                p_rate = pn / (pms / 1000) if isinstance(pn, (int, float)) and isinstance(pms, (int, float)) and pms > 0 else None
                return Timed(int(n), rate, round(rate, 2), "server", t0, t1, int(pn) if isinstance(pn, (int, float)) else 0,
                             round(p_rate, 1) if p_rate else None)
            self.stream = True
        return self._streamed(url, timeout_s)

    def _streamed(self, url: str, timeout_s: float) -> Timed:
        t0 = time.monotonic()
        arrivals: list[float] = []
        usage_tokens = None
        for at, event in stream_json(url, self._body(True), timeout_s=timeout_s):
            if not isinstance(event, dict):
                raise ServerError("bad-answer", f"{url} streamed {type(event).__name__}, not a completion chunk")
            choices = event.get("choices")
            if isinstance(choices, list) and choices and isinstance(choices[0], dict) and choices[0].get("text"):
                arrivals.append(at)
            usage = event.get("usage")
            if isinstance(usage, dict) and isinstance(usage.get("completion_tokens"), int):
                usage_tokens = usage["completion_tokens"]
        t1 = time.monotonic()
        if len(arrivals) < MIN_TOKENS or arrivals[-1] <= arrivals[0]:
            raise ServerError("error", f"the stream carried {len(arrivals)} tokens (asked {self.o.tokens}): too few to time")
        tokens = usage_tokens if usage_tokens and usage_tokens >= len(arrivals) else len(arrivals)
        rate = (tokens - 1) / (arrivals[-1] - arrivals[0])  # first token to last: decode, without the prefill
        self.path = " (/v1/completions, streamed)"
        return Timed(tokens, rate, None, "wall", t0, t1)

    def loaded(self) -> dict[str, Any]:
        """llama-server's /props (n_ctx, model_path) and /v1/models meta (size); vLLM's max_model_len."""
        out: dict[str, Any] = {}
        url, ask = self.server.url, self.o.ask_s
        try:
            models = request_json(f"{url}/v1/models", timeout_s=ask)
            row = _row(models, "data", "id", self.model) or {}
            meta = _dict(row.get("meta"))
            out["model_bytes"] = _int(meta.get("size"))
            details = {k: str(meta[k]) for k in ("n_params", "n_ctx_train") if isinstance(meta.get(k), int)}
            if isinstance(row.get("max_model_len"), int):
                details["max_model_len"] = str(row["max_model_len"])
                out["n_ctx"] = row["max_model_len"]
            out["details"] = details
            if self.server.flavour == "llama-server":
                props = request_json(f"{url}/props", timeout_s=ask)
                settings = props.get("default_generation_settings") if isinstance(props, dict) else None
                if isinstance(settings, dict) and isinstance(settings.get("n_ctx"), int):
                    out["n_ctx"] = settings["n_ctx"]
                if isinstance(props, dict) and isinstance(props.get("model_path"), str):
                    out["model_path"] = props["model_path"][:500]
        except ServerError:
            pass
        return out


def _row(doc: Any, key: str, field: str, name: str) -> dict | None:
    items = doc.get(key) if isinstance(doc, dict) else None
    return next((m for m in items if isinstance(m, dict) and m.get(field) == name), None) if isinstance(items, list) else None


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _parameters(text: Any) -> dict[str, str]:
    """Ollama's `parameters`: one "name value" per line (num_ctx 8192, stop "<|im_end|>")."""
    if not isinstance(text, str):
        return {}
    out: dict[str, str] = {}
    for line in text.splitlines()[:100]:
        name, _, value = line.strip().partition(" ")
        if name and value:
            out.setdefault(name, value.strip()[:80])
    return out
