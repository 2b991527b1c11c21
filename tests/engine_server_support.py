"""A fake engine server for the --engine-url tests: http.server on 127.0.0.1 in a thread, answering Ollama's native
API or an OpenAI-compatible one (llama-server, vLLM flavours), well or with hostile answers (huge bodies, NaN, a slow
drip, wrong types, HTML). No tests here; the probe, verdict and CLI tests import it."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, TypeVar

Route = Callable[[Any], Any]  # the request's JSON body (None for GET) -> a dict/list (JSON), bytes, or a Reply


class Reply:
    def __init__(self, status: int = 200, body: bytes = b"", drip_s: float = 0.0, content_type: str = "application/json",
                 chunks: list[bytes] | None = None, gap_s: float = 0.0) -> None:
        self.status, self.body, self.drip_s, self.content_type = status, body, drip_s, content_type
        self.chunks, self.gap_s = chunks, gap_s


S = TypeVar("S", bound="LocalServer")


class LocalServer:
    """An http.server on 127.0.0.1 (a free port) served from a daemon thread while the `with` block runs: the one
    lifecycle of this file's FakeServer and serving_support's FakeEngine."""

    httpd: ThreadingHTTPServer
    thread: threading.Thread

    def _listen(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self: S) -> S:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class FakeServer(LocalServer):
    """Routes by (method, path); anything else is a 404 with a JSON error, as the engines answer."""

    def __init__(self, routes: dict[tuple[str, str], Route]) -> None:
        self.routes = routes
        self.calls: list[tuple[str, str, Any]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _serve(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                path = self.path.split("?")[0]
                owner.calls.append((method, path, body))
                route = owner.routes.get((method, path))
                reply = route(body) if route else Reply(404, b'{"error": "404 page not found"}')
                if not isinstance(reply, Reply):
                    reply = Reply(200, reply if isinstance(reply, bytes) else json.dumps(reply).encode())
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", reply.content_type)
                    if reply.chunks is None and not reply.drip_s:
                        self.send_header("Content-Length", str(len(reply.body)))
                    self.end_headers()
                    if reply.chunks is not None:
                        for chunk in reply.chunks:
                            self.wfile.write(chunk)
                            self.wfile.flush()
                            time.sleep(reply.gap_s)
                    elif reply.drip_s:
                        for byte in reply.body:
                            self.wfile.write(bytes([byte]))
                            self.wfile.flush()
                            time.sleep(reply.drip_s)
                    else:
                        self.wfile.write(reply.body)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                self._serve("GET")

            def do_POST(self) -> None:  # noqa: N802
                self._serve("POST")

        self._listen(Handler)


def closed_port_url() -> str:
    """A URL on this host where nothing listens: connection refused."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}"


GIB = 1024 ** 3


def ollama_routes(rates: list[float] | None = None, size: int = 17 * GIB, size_vram: int | None = None,
                  model_bytes: int = 16 * GIB, num_ctx: int = 8192, parameters: str = "num_ctx 8192",
                  generate: Route | None = None, version: str = "0.12.3") -> dict[tuple[str, str], Route]:
    """Ollama with one model loaded (qwen3:27b), its decode at the given tok/s per request, in turn."""
    speeds = list(rates or [30.0])
    count = {"n": 0}

    def gen(body: Any) -> Any:
        rate = speeds[min(count["n"], len(speeds) - 1)]
        count["n"] += 1
        n = body["options"]["num_predict"]
        return {"model": body["model"], "response": "one, two", "done": True, "eval_count": n,
                "eval_duration": int(n / rate * 1e9), "prompt_eval_count": 40, "prompt_eval_duration": int(0.05e9),
                "total_duration": int(n / rate * 1e9) + int(0.1e9)}

    model = "qwen3:27b"
    return {
        ("GET", "/api/version"): lambda _: {"version": version},
        ("GET", "/api/tags"): lambda _: {"models": [{"name": model, "model": model, "size": model_bytes,
                                                     "details": {"quantization_level": "Q4_K_M"}}]},
        ("GET", "/api/ps"): lambda _: {"models": [{"name": model, "model": model, "size": size,
                                                   "size_vram": size if size_vram is None else size_vram,
                                                   "context_length": num_ctx}]},
        ("POST", "/api/show"): lambda _: {"parameters": parameters, "details": {"quantization_level": "Q4_K_M",
                                                                               "parameter_size": "27.2B", "format": "gguf"}},
        ("POST", "/api/generate"): generate or gen,
    }


def openai_routes(flavour: str = "llama-server", rates: list[float] | None = None, timings: bool = True,
                  size: int | None = 16 * GIB, completions: Route | None = None, gap_s: float = 0.002
                  ) -> dict[tuple[str, str], Route]:
    """An OpenAI-compatible server: llama-server (owned_by llamacpp, `timings`, /props) or vLLM (owned_by vllm,
    /version, max_model_len, streamed without timings)."""
    speeds = list(rates or [40.0])
    count = {"n": 0}
    owned = {"llama-server": "llamacpp", "vllm": "vllm"}.get(flavour, "someone")
    row: dict = {"id": "model-27b", "object": "model", "owned_by": owned}
    if flavour == "llama-server" and size:
        row["meta"] = {"size": size, "n_params": 27_000_000_000, "n_ctx_train": 32768}
    if flavour == "vllm":
        row["max_model_len"] = 8192

    def complete(body: Any) -> Any:
        rate = speeds[min(count["n"], len(speeds) - 1)]
        count["n"] += 1
        n = body["max_tokens"]
        if not body.get("stream"):
            doc: dict = {"id": "c1", "object": "text_completion", "choices": [{"text": "one, two", "index": 0}],
                         "usage": {"completion_tokens": n, "prompt_tokens": 40}}
            if timings:
                doc["timings"] = {"prompt_n": 40, "prompt_ms": 50.0, "predicted_n": n, "predicted_ms": n / rate * 1000,
                                  "predicted_per_second": rate}
            return doc
        chunks = [b'data: {"choices": [{"text": " t", "index": 0}]}\n\n' for _ in range(n)]
        chunks.append(b'data: {"choices": [], "usage": {"completion_tokens": %d}}\n\n' % n)
        chunks.append(b"data: [DONE]\n\n")
        return Reply(200, chunks=chunks, gap_s=1.0 / rate if rate < 1000 else gap_s, content_type="text/event-stream")

    routes: dict[tuple[str, str], Route] = {
        ("GET", "/v1/models"): lambda _: {"object": "list", "data": [row]},
        ("POST", "/v1/completions"): completions or complete,
    }
    if flavour == "llama-server":
        routes[("GET", "/props")] = lambda _: {"default_generation_settings": {"n_ctx": 8192}, "total_slots": 1,
                                               "model_path": "/models/model-27b-Q4_K_M.gguf"}
        routes[("GET", "/health")] = lambda _: {"status": "ok"}
    if flavour == "vllm":
        routes[("GET", "/version")] = lambda _: {"version": "0.19.1"}
    return routes
