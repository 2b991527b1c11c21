"""Reading llama-server and Ollama: loopback only, GET only, the numbers parsed."""

from __future__ import annotations

import json

import pytest

from doctor.facts.engines.servers import NotLoopback, loopback_url, parse_metrics, read_server

METRICS = """# HELP llamacpp:prompt_tokens_seconds Average prompt throughput in tokens/s.
# TYPE llamacpp:prompt_tokens_seconds gauge
llamacpp:prompt_tokens_seconds 812.5
llamacpp:predicted_tokens_seconds 31.2
llamacpp:kv_cache_usage_ratio 0.41
llamacpp:requests_processing 1
"""


def test_only_loopback_is_read():
    assert loopback_url("127.0.0.1:8080") == "http://127.0.0.1:8080"
    assert loopback_url("http://localhost:11434/api") == "http://localhost:11434"
    assert loopback_url("http://[::1]:8080") == "http://[::1]:8080"
    for bad in ("http://10.0.0.5:8080", "https://127.0.0.1:8080", "http://example.com"):
        with pytest.raises(NotLoopback, match="loopback"):
            loopback_url(bad)


def test_llama_server_metrics_and_slots():
    assert parse_metrics(METRICS)["predicted_tokens_seconds"] == 31.2
    pages = {"/api/ps": (404, "File Not Found"), "/metrics": (200, METRICS),
             "/slots": (200, json.dumps([{"id": 0, "n_ctx": 8192, "is_processing": True}]))}
    seen = []

    def get(url):
        seen.append(url)
        return pages[url.split(":8080", 1)[1]]

    r = read_server("http://127.0.0.1:8080", get)
    assert r.kind == "llama-server" and r.metrics["kv_cache_usage_ratio"] == 0.41 and r.slots[0]["n_ctx"] == 8192
    assert all(u.startswith("http://127.0.0.1:8080/") for u in seen)


def test_ollama_ps_gives_the_vram_share():
    body = json.dumps({"models": [{"name": "qwen2.5:32b", "size": 21_000_000_000, "size_vram": 15_750_000_000,
                                   "context_length": 8192}]})
    r = read_server("http://127.0.0.1:11434", lambda url: (200, body))
    assert r.kind == "ollama" and r.models[0]["vram_share"] == 0.75


def test_llama_server_without_metrics_says_how_to_enable_them():
    def get(url):
        if url.endswith("/slots"):
            return 200, "[]"
        return 404, "not found"

    assert "--metrics" in read_server("http://127.0.0.1:8080", get).error


def test_describe_says_what_runs_on_the_cpu():
    from doctor.facts.engines.servers import ServerReading, describe

    o = ServerReading("http://127.0.0.1:11434", "ollama", models=({"name": "q", "size": 20e9, "size_vram": 15e9,
                                                                    "vram_share": 0.75},))
    assert "75% in VRAM: the rest runs on the CPU" in describe(o)[0]
    s = ServerReading("http://127.0.0.1:8080", "llama-server", metrics={"predicted_tokens_seconds": 31.2},
                      slots=({"id": 0, "n_ctx": 8192, "is_processing": True},))
    assert describe(s) == ["llama-server at http://127.0.0.1:8080: decode 31.2 tok/s (server average); 1/1 slots busy, "
                           "n_ctx 8192"]


def test_watch_refuses_a_remote_engine_url():
    from conftest import run_cli

    proc = run_cli("watch", "--engine-url", "http://10.1.2.3:8080", "--seconds", "1")
    assert proc.returncode == 3 and "loopback" in proc.stderr and "Traceback" not in proc.stderr
