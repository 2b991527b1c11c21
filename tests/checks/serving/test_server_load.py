"""server-load on recorded /metrics pages: busy with requests deferred (warn: queued, not slow), busy with none
waiting (pass), a server that stopped answering mid-window (fail), idle (info), Ollama, TabbyAPI and LM Studio (info:
no counters), no server or no counters (skip); the Prometheus text read by prometheus_client's parser; the page and
the watch report recorded on the H200 with a real llama-server; and watch --engine-url against a local fake server,
beside NVML."""

from __future__ import annotations

import json
from dataclasses import replace

from conftest import MACHINES, ROOT
from serving_support import FakeEngine, replayed_sampler

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
    assert f.status == Status.PASS and "64 tok/s served over the 10 s with work" in f.summary
    assert "up to 2 requests in flight (2 of 2 slots busy)" in f.summary and "peak" not in f.summary  # one interval
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

    monkeypatch.setattr("doctor.facts.sampling.sampler.Sampler", replayed_sampler(healthy))
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


def test_a_server_that_stops_answering_mid_window_fails():
    t0, t1 = reading("llama-server-busy-t0.prom"), reading("llama-server-busy-t10.prom")
    gone = ServerReading(t0.url, "llama-server", error="/metrics: <urlopen error [Errno 111] Connection refused>; "
                         "/slots: <urlopen error [Errno 111] Connection refused>")
    f = judged(series(t0.url, [(0.0, t0), (10.0, t1), (12.0, gone), (14.0, gone)]))
    assert f.status == Status.FAIL and "stopped answering at 12 s" in f.summary and "server's own log" in f.fix
    assert f.evidence["stopped_answering_at_s"] == 12.0
    back = judged(series(t0.url, [(0.0, t0), (2.0, gone), (10.0, t1)]))  # a missed reading, then it answered again
    assert back.status == Status.WARN and "stopped_answering_at_s" not in back.evidence


def test_servers_without_counters_are_info_and_named_for_what_they_are():
    for kind, words in (("tabbyapi", "TabbyAPI keeps no request counters"), ("lm-studio", "LM Studio"),
                        ("openai-compatible", "an OpenAI-compatible")):
        r = ServerReading("http://127.0.0.1:5000", kind)
        f = judged(series(r.url, [(0.0, r), (2.0, r)], kind))
        assert f.status == Status.INFO and words in f.summary and "--metrics" not in f.fix, kind


RECORDED_PAGE = "llama-server-h200-recorded.prom"  # the H200 run of 2026-12-04 (README.md beside it)


def test_the_page_recorded_from_a_real_llama_server_parses_and_reads_as_it_was_served():
    m = parse_metrics(page(RECORDED_PAGE))
    assert m["tokens_predicted_total"] == 912 and m["tokens_predicted_seconds_total"] == 13.0205
    assert m["predicted_tokens_seconds"] == 59.4639 and m["requests_processing"] == 0 and m["n_decode_total"] == 400
    slots = json.loads(page("llama-server-h200-recorded-slots.json"))
    pages = {"/metrics": (200, page(RECORDED_PAGE)), "/slots": (200, json.dumps(slots))}
    r = read_server("http://127.0.0.1:8089", lambda url: pages.get(url.split(":8089", 1)[1], (404, "")),
                    flavour="llama-server")
    assert r.kind == "llama-server" and len(r.slots) == 4 and all(s["n_decoded"] == 0 for s in r.slots)
    c = counters(r, 0.0)
    assert (c.in_flight, c.queued, c.tokens_total, c.slots_busy, c.slots, c.tokens_in_progress) == (0, 0, 912, 0, 4, 0)


def test_the_recorded_h200_watch_replays_as_llama_server_with_its_counters(capsys):
    from doctor.cli import main

    fixture = ROOT / "fixtures" / "samples" / "h200-llamacpp-serving-watch.json"
    doc = load_document(str(fixture))
    f = run_one(server_load.CHECK, CheckContext(doc.facts, doc.plan))
    assert f.status == Status.PASS, f.summary
    ev = f.evidence
    assert (ev["most_in_flight"], ev["most_slots_busy"], ev["slots"], ev["most_queued"]) == (4, 4, 4, 0)
    assert ev["tokens_served"] == 896 and ev["served_tok_s_peak"] == 256.0 and ev["per_request_tok_s"] == 69.76
    assert ev["working_s"] == 6.01 and ev["served_tok_s_working"] == round(896 / 6.01, 2)
    code = main(["--no-tui", "--replay", str(fixture)])
    out = capsys.readouterr().out
    assert "Judged as llama.cpp: the server at http://127.0.0.1:8089 (watch --engine-url) answered as" in out
    assert "[i] exllamav2-ready" not in out and "exllamav2 is not installed" not in out
    assert "28 busy samples over 40 s" in out  # util 0% for the idle 34 s: not busy, though the H200 gave no gpu_idle
    assert "4.3–6.3             4→0       0     4→0 of 4         256.0       96%   1,980    3,201" in out
    assert "6.3–40.2              0       0       0 of 4           0.0        0%   1,980    3,201  idle" in out
    assert "server average" not in out and code == 0
    main(["--json", "--replay", str(fixture)])
    again = json.loads(capsys.readouterr().out)
    assert again["engine_in_force"] == {"engine": "llama.cpp", "why": "the server at http://127.0.0.1:8089 (watch "
                                        "--engine-url) answered as llama-server", "assumed": False}
    recorded = json.loads(fixture.read_text())["facts"]["samples"]["server"]
    kept = again["facts"]["samples"]["server"]
    assert [{**x, "tokens_in_progress": None} for x in recorded["samples"]] == kept["samples"]  # a field added since
    assert {k: v for k, v in kept.items() if k != "samples"} == {k: v for k, v in recorded.items() if k != "samples"}
