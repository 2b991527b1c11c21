"""server-load on recorded /metrics pages: busy with requests deferred (warn: queued, not slow), busy with none
waiting (pass), idle (info), Ollama (info: no counters), no server or no counters (skip); the Prometheus text read by
prometheus_client's parser; and watch --engine-url against a local fake server, beside NVML. (The check has no fail:
a saturated server is a warning with its fix.)"""

from __future__ import annotations

import json
import time
from dataclasses import replace

from conftest import MACHINES, ROOT
from serving_support import FakeEngine

from checks.base import CheckContext
from checks.registry import checks_for
from checks.runner import run_one
from checks.serving import server_load
from doctor.facts.engines.servers import ServerReading, counters, parse_metrics, parse_vllm, read_server, series
from doctor.facts.replay import load_document
from doctor.model.findings import Status
from doctor.model.plan import Plan
from doctor.model.samples import SampleSeries

BASE = load_document(str(MACHINES / "v100-pcie-16gb-healthy.json")).facts
PAGES = ROOT / "tests" / "fixtures" / "serving"


def page(name: str) -> str:
    return (PAGES / name).read_text()


def reading(name: str, slots: int = 2, busy: int = 2) -> ServerReading:
    return ServerReading("http://127.0.0.1:8080", "llama-server", metrics=parse_metrics(page(name)),
                         slots=tuple({"id": i, "n_ctx": 4096, "is_processing": i < busy} for i in range(slots)))


def judged(srv):
    f = replace(BASE, samples=SampleSeries("2026-12-04T17:00:00Z", 10.0, 5.0, server=srv))
    return run_one(server_load.CHECK, CheckContext(f, Plan()))


def test_the_recorded_page_parses_with_prometheus_client():
    m = parse_metrics(page("llama-server-busy-t0.prom"))
    assert m["tokens_predicted_total"] == 3469 and m["requests_deferred"] == 2 and m["kv_cache_usage_ratio"] == 0.42
    v = parse_vllm(page("vllm.prom"))
    assert v["num_requests_running"] == 3 and v["generation_tokens_total"] == 15230
    assert parse_metrics("llamacpp:broken{ 1\n") == {}  # a page the parser refuses is no counters, not a traceback


def test_requests_deferred_are_queued_not_slow():
    srv = series("http://127.0.0.1:8080", [(0.0, reading("llama-server-busy-t0.prom")),
                                           (10.0, reading("llama-server-busy-t10.prom"))])
    f = judged(srv)
    assert f.status == Status.WARN and f.summary.startswith("queued, not slow: up to 2 requests waited")
    assert f.evidence["served_tok_s"] == 64.0 and f.evidence["per_request_tok_s"] == round(640 / 20.2, 2)
    assert f.evidence["most_slots_busy"] == 2 and f.evidence["slots"] == 2
    assert any("--parallel" in c for c in f.commands)


def test_busy_with_nobody_waiting_passes_and_idle_says_so():
    t0 = reading("llama-server-busy-t0.prom")
    t1 = reading("llama-server-busy-t10.prom")
    no_wait = [(0.0, replace(t0, metrics={**t0.metrics, "requests_deferred": 0.0})),
               (10.0, replace(t1, metrics={**t1.metrics, "requests_deferred": 0.0}))]
    f = judged(series("http://127.0.0.1:8080", no_wait))
    assert f.status == Status.PASS and "served 64 tok/s in total" in f.summary and "2 requests in flight" in f.summary
    idle = [(0.0, reading("llama-server-idle.prom", busy=0)), (10.0, reading("llama-server-idle.prom", busy=0))]
    g = judged(series("http://127.0.0.1:8080", idle))
    assert g.status == Status.INFO and "idle" in g.summary


def test_vllm_ollama_and_nothing_to_read():
    v = ServerReading("http://127.0.0.1:8000", "vllm", metrics=parse_vllm(page("vllm.prom")))
    later = replace(v, metrics={**v.metrics, "generation_tokens_total": 15230 + 900})
    f = judged(series(v.url, [(0.0, v), (3.0, later)]))
    assert f.status == Status.PASS and f.evidence["served_tok_s"] == 300.0 and f.evidence["most_in_flight"] == 3
    assert counters(v, 0.0).kv_usage == 0.12
    o = ServerReading("http://127.0.0.1:11434", "ollama", models=({"name": "q", "size": 1, "size_vram": 1,
                                                                    "vram_share": 1.0},))
    assert judged(series(o.url, [(0.0, o)])).status == Status.INFO
    bare = ServerReading("http://127.0.0.1:8080", "llama-server", error="no /metrics (start llama-server with --metrics)")
    s = judged(series(bare.url, [(0.0, bare), (2.0, bare)]))
    assert s.status == Status.SKIP and "--metrics" in s.fix
    assert judged(None).status == Status.SKIP


def test_server_load_runs_only_where_a_server_was_watched():
    ids = {c.id for c in checks_for(Plan(), BASE)}
    assert "server-load" not in ids
    watched = replace(BASE, samples=SampleSeries("t", 1.0, 5.0, server=series("http://x", [])))
    assert "server-load" in {c.id for c in checks_for(Plan(), watched)}


def test_a_fake_llama_server_is_read_over_http():
    with FakeEngine(metrics=page("llama-server-busy-t0.prom").replace("llamacpp:requests_processing 2",
                                                                       "llamacpp:requests_processing {ACTIVE}")) as srv:
        r = read_server(srv.url)
    assert r.kind == "llama-server" and r.metrics["requests_deferred"] == 2 and len(r.slots) == 4


def test_watch_engine_url_puts_the_counters_beside_nvml(monkeypatch, capsys, validate):
    from doctor.cli import main

    healthy = load_document(str(ROOT / "fixtures" / "samples" / "v100-decode-healthy.json")).facts

    class Sampler:  # NVML's samples replayed from the healthy fixture, as test_watch's fake does
        def __init__(self, *args, **kw):
            self.t0 = time.monotonic()

        def start(self):
            return self

        nvml_failure = ""
        elapsed_s = property(lambda self: time.monotonic() - self.t0)

        def latest(self, index):
            return healthy.samples.gpus[0].samples[-1]

        def watched_all_exited(self):
            return False

        def stop(self, wait_s=None):
            return replace(healthy.samples, duration_s=round(self.elapsed_s, 2))

    monkeypatch.setattr("doctor.facts.sampling.sampler.Sampler", Sampler)
    monkeypatch.setattr("doctor.run.pipeline.gather", lambda plan, options=None: replace(healthy, samples=None))
    metrics = page("llama-server-busy-t0.prom").replace("llamacpp:requests_processing 2",
                                                        "llamacpp:requests_processing {ACTIVE}")
    with FakeEngine(metrics=metrics) as srv:
        code = main(["watch", "--seconds", "1", "--engine-url", srv.url, "--json"])
    doc = json.loads(capsys.readouterr().out)
    validate(doc)
    server = doc["facts"]["samples"]["server"]
    assert server["kind"] == "llama-server" and len(server["samples"]) >= 2
    f = next(x for x in doc["findings"] if x["id"] == "server-load")
    assert f["status"] == "warn" and "queued, not slow" in f["summary"] and code in (0, 1)
    assert {x["id"] for x in doc["findings"]} >= {"thermal", "gpu-processes", "server-load"}
