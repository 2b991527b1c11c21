"""A local fake engine server for the concurrency probe and watch's counters (issue 38): an OpenAI-compatible one
(/v1/models, /v1/completions streamed, /metrics, /slots) or Ollama's (/api/ps, /api/generate streamed), that either
batches concurrent requests (each decode step costs `step_s` x a growth per active request) or takes them one at a
time (a lock). Real sockets on 127.0.0.1, so the doctor's own HTTP code runs as against a real server."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import replace
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from engine_server_support import LocalServer

RECORDED = Path(__file__).parent / "fixtures" / "serving"


class FakeEngine(LocalServer):
    def __init__(self, kind: str = "openai", batched: bool = True, step_s: float = 0.004, growth: float = 0.15,
                 metrics: str | None = None) -> None:
        self.kind, self.batched, self.step_s, self.growth = kind, batched, step_s, growth
        self.metrics = metrics
        self.active = 0
        self.lock = threading.Lock()
        self.queue = threading.Lock()
        self.served = 0
        engine = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                engine.get(self)

            def do_POST(self) -> None:  # noqa: N802
                engine.post(self)

        self._listen(Handler)

    def _json(self, h: BaseHTTPRequestHandler, code: int, doc: object) -> None:
        body = json.dumps(doc).encode()
        h.send_response(code)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    def get(self, h: BaseHTTPRequestHandler) -> None:
        if self.kind == "ollama" and h.path == "/api/ps":
            return self._json(h, 200, {"models": [{"name": "fake:27b", "size": 16_000_000_000,
                                                   "size_vram": 16_000_000_000, "context_length": 8192}]})
        if self.kind == "ollama" and h.path == "/api/version":
            return self._json(h, 200, {"version": "0.12.3"})
        if self.kind == "ollama" and h.path == "/api/tags":
            return self._json(h, 200, {"models": [{"name": "fake:27b", "size": 15_000_000_000}]})
        if self.kind == "openai" and h.path == "/v1/models":
            return self._json(h, 200, {"object": "list", "data": [{"id": "fake-27b.gguf", "object": "model"}]})
        if self.kind == "openai" and h.path == "/metrics" and self.metrics is not None:
            body = self.metrics.replace("{ACTIVE}", str(self.active)).encode()
            h.send_response(200)
            h.send_header("Content-Type", "text/plain; version=0.0.4")
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.wfile.write(body)
            return None
        if self.kind == "openai" and h.path == "/slots":
            return self._json(h, 200, [{"id": i, "n_ctx": 4096, "is_processing": i < self.active} for i in range(4)])
        return self._json(h, 404, {"error": "File Not Found"})

    def post(self, h: BaseHTTPRequestHandler) -> None:
        body = json.loads(h.rfile.read(int(h.headers.get("Content-Length") or 0)) or b"{}")
        if h.path not in ("/v1/completions", "/api/generate"):
            return self._json(h, 404, {"error": "File Not Found"})
        tokens = int(body.get("max_tokens") or (body.get("options") or {}).get("num_predict") or 16)
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream" if h.path.startswith("/v1") else "application/x-ndjson")
        h.end_headers()
        if not self.batched:
            self.queue.acquire()
        with self.lock:
            self.active += 1
        try:
            time.sleep(self.step_s * 3)  # the prompt
            for i in range(tokens):
                with self.lock:
                    n = self.active
                time.sleep(self.step_s * (1 + self.growth * (n - 1)) if self.batched else self.step_s)
                self._event(h, {"choices": [{"index": 0, "text": f" w{i}", "finish_reason": None}]}
                            if h.path.startswith("/v1") else {"model": "fake:27b", "response": f" w{i}", "done": False})
            if h.path.startswith("/v1"):
                self._event(h, {"choices": [{"index": 0, "text": "", "finish_reason": "length"}],
                                "usage": {"completion_tokens": tokens, "prompt_tokens": 20}})
                h.wfile.write(b"data: [DONE]\n\n")
            else:
                self._event(h, {"model": "fake:27b", "response": "", "done": True, "eval_count": tokens,
                                "eval_duration": int(tokens * self.step_s * 1e9)})
            h.wfile.flush()
        finally:
            with self.lock:
                self.active -= 1
                self.served += 1
            if not self.batched:
                self.queue.release()

    def _event(self, h: BaseHTTPRequestHandler, doc: dict) -> None:
        line = json.dumps(doc).encode()
        h.wfile.write(b"data: " + line + b"\n\n" if doc.get("choices") is not None or "usage" in doc else line + b"\n")
        h.wfile.flush()


def replayed_sampler(facts: Any, latest: int = -1) -> type:
    """A stand-in for NVML's sampler (monkeypatched over doctor.facts.sampling.sampler.Sampler) that replays a recorded
    series: its `latest` sample for the live line, as many samples as the seconds watched at 5 Hz when stopped."""
    g = facts.samples.gpus[0]

    class Sampler:
        nvml_failure = ""

        def __init__(self, *args: Any, **kw: Any) -> None:
            self.t0 = time.monotonic()

        def start(self) -> Any:
            return self

        @property
        def elapsed_s(self) -> float:
            return time.monotonic() - self.t0

        def latest(self, index: int) -> Any:
            return g.samples[latest]

        def watched_all_exited(self) -> bool:
            return False

        def stop(self, wait_s: float | None = None) -> Any:
            n = max(2, int(self.elapsed_s * 5))
            samples = tuple(replace(s, t_s=i / 5) for i, s in enumerate(g.samples[:n]))
            return replace(facts.samples, duration_s=round(self.elapsed_s, 2), server=None,
                           gpus=(replace(g, samples=samples),))

    return Sampler
