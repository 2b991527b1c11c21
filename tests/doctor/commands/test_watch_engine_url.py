"""`watch --engine-url` judges the server as what it answers as (llama-server, vLLM, Ollama, TabbyAPI, an
OpenAI-compatible one), as `probe --engine-url` does, so that checks for another engine stay quiet; its live line
shows the server's requests in flight, slots busy and tokens served beside the GPU's clocks; a URL where nothing
answers is a one-line error (exit 3)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from conftest import ROOT
from engine_server_support import FakeServer, Reply, closed_port_url, ollama_routes
from serving_support import replayed_sampler

from doctor.cli import main
from doctor.facts.replay import load_document
from doctor.model.ids import Engine
from doctor.model.samples import GpuSample

H200 = load_document(str(ROOT / "fixtures" / "samples" / "h200-llamacpp-serving-watch.json")).facts
PAGES = ROOT / "tests" / "fixtures" / "serving"
RECORDED = (PAGES / "llama-server-h200-recorded.prom").read_text()
SLOTS = json.loads((PAGES / "llama-server-h200-recorded-slots.json").read_text())
VLLM = (PAGES / "vllm.prom").read_text()


@pytest.fixture
def fake_gpu(monkeypatch):
    monkeypatch.setattr("doctor.facts.sampling.sampler.Sampler", replayed_sampler(H200, latest=5))  # util 97%
    monkeypatch.setattr("doctor.run.pipeline.gather", lambda plan, options=None: replace(H200, samples=None))
    monkeypatch.setattr("doctor.commands.watch.SERVER_EVERY_S", 0.5)


def llama_server(busy: list[int]) -> dict:
    """A llama-server: /v1/models owned by llamacpp, the recorded /metrics and /slots with `busy` slots running, each
    reading 64 tokens further on (its counter moves only when requests end: never here)."""
    state = {"n": 0}

    def metrics(_):
        k = busy[min(state["n"], len(busy) - 1)]
        return Reply(200, RECORDED.replace("llamacpp:requests_processing 0", f"llamacpp:requests_processing {k}")
                     .encode(), content_type="text/plain; version=0.0.4")

    def slots(_):
        k = busy[min(state["n"], len(busy) - 1)]
        state["n"] += 1
        return [{**s, "is_processing": i < k, "next_token": [{**s["next_token"][0], "n_decoded": 64 * state["n"] if i < k
                                                               else 0}]} for i, s in enumerate(SLOTS)]

    return {("GET", "/v1/models"): lambda _: {"object": "list", "data": [{"id": "q4km.gguf", "owned_by": "llamacpp"}]},
            ("GET", "/metrics"): metrics, ("GET", "/slots"): slots}


def vllm() -> dict:
    return {("GET", "/v1/models"): lambda _: {"object": "list", "data": [{"id": "Qwen/Qwen2.5-7B", "owned_by": "vllm"}]},
            ("GET", "/version"): lambda _: {"version": "0.21.0"},
            ("GET", "/metrics"): lambda _: Reply(200, VLLM.encode(), content_type="text/plain")}


def tabbyapi() -> dict:
    return {("GET", "/v1/models"): lambda _: {"object": "list", "data": [{"id": "qwen-exl2", "owned_by": "tabbyAPI"}]}}


def openai_compatible() -> dict:
    return {("GET", "/v1/models"): lambda _: {"object": "list", "data": [{"id": "some-model", "owned_by": "someone"}]}}


def watch_json(capsys, routes: dict, *extra: str) -> tuple[dict, str, int]:
    with FakeServer(routes) as srv:
        code = main(["watch", "--seconds", "1.5", "--engine-url", srv.url, "--json", *extra])
    captured = capsys.readouterr()
    return json.loads(captured.out), captured.err, code


@pytest.mark.parametrize(("routes", "engine", "kind", "answers"), [
    (lambda: llama_server([4]), Engine.LLAMA_CPP, "llama-server", "llama-server"),
    (vllm, Engine.VLLM, "vllm", "vLLM 0.21.0"),
    (ollama_routes, Engine.OLLAMA, "ollama", "Ollama 0.12.3"),
    (tabbyapi, Engine.EXLLAMAV2, "tabbyapi", "TabbyAPI"),
], ids=["llama-server", "vllm", "ollama", "tabbyapi"])
def test_watch_judges_the_server_as_what_it_answers_as(fake_gpu, capsys, validate, routes, engine, kind, answers):
    doc, err, code = watch_json(capsys, routes())
    validate(doc)
    judged = doc["engine_in_force"]
    assert judged["engine"] == engine.value and not judged["assumed"], judged
    assert judged["why"].endswith(f"(--engine-url) answers as {answers}")
    assert doc["facts"]["samples"]["server"]["kind"] == kind
    assert f"answers as {answers}" in err and "no engine named or found" not in err
    load = next(f for f in doc["findings"] if f["id"] == "server-load")
    assert load["status"] in ({"pass"} if kind in ("llama-server", "vllm") else {"info"}), load
    assert code in (0, 1)


def test_an_openai_compatible_server_with_llama_servers_counters_is_read_as_llama_server(fake_gpu, capsys):
    routes = {**llama_server([2]), **openai_compatible()}  # /v1/models does not say; /metrics does
    doc, err, _ = watch_json(capsys, routes)
    assert doc["facts"]["samples"]["server"]["kind"] == "llama-server"
    assert doc["engine_in_force"]["engine"] == Engine.LLAMA_CPP.value  # by the counters it serves
    plain, _, _ = watch_json(capsys, openai_compatible())
    assert plain["facts"]["samples"]["server"]["kind"] == "openai-compatible"
    assert next(f for f in plain["findings"] if f["id"] == "server-load")["status"] == "info"


def test_the_replay_of_a_watched_llama_server_keeps_other_engines_checks_quiet(fake_gpu, capsys, tmp_path):
    out = tmp_path / "watch.json"
    watch_json(capsys, llama_server([4]), "-o", str(out))
    main(["--no-tui", "--replay", str(out)])
    text = capsys.readouterr().out
    assert "Judged as llama.cpp: the server at http://127.0.0.1:" in text and "answers as llama-server" in text
    assert "[i] exllamav2-ready" not in text and "[–] exllamav2-ready: skipped: the engine judged is llama.cpp" in text


def test_the_live_line_shows_the_servers_figures_beside_the_gpus(fake_gpu, capsys):
    _, err, _ = watch_json(capsys, llama_server([1, 2, 4, 4, 4, 4, 4, 4]))
    lines = [x for x in err.splitlines() if x.startswith("watching GPU 0:")]
    assert lines and all("SM 1980 MHz · mem 3201 MHz · util 97%" in x for x in lines), lines
    assert any("llama-server: " in x and " in flight, 0 queued, " in x and "/4 slots busy" in x for x in lines), lines
    assert any("tok/s served (last " in x for x in lines) or len(lines) == 1, lines
    assert "– ·" not in "".join(lines) and not any(x.rstrip().endswith("–") for x in lines)
    end = next(x for x in err.splitlines() if x.startswith("v100-doctor: end: llama-server at"))
    assert "since it started: 912 tokens generated by finished requests, 70.0 tok/s per request while generating" in end
    assert "server average" not in err and "n_ctx 2048 each" in end


def test_the_live_line_in_each_state():
    from doctor.commands.watch import ServerWatch, _progress_line
    from doctor.facts.engines.servers import ServerReading

    class One:
        elapsed_s = 12.0

        def latest(self, index):
            return GpuSample(t_s=12.0, sm_clock_mhz=1380, mem_clock_mhz=877, util_gpu_pct=97, temperature_c=70,
                             pcie_rx_mbs=20.0, reasons=())

    w = ServerWatch("http://127.0.0.1:8080", "llama-server")
    assert _progress_line(One(), 0, 30, "GPU 0", w).endswith("PCIe RX 0.02 GB/s · llama-server: not read yet")
    slots = tuple({"id": i, "n_ctx": 2048, "is_processing": i < 3, "n_decoded": 100.0 if i < 3 else 0} for i in range(4))
    m = {"requests_processing": 3.0, "requests_deferred": 1.0, "tokens_predicted_total": 500.0}
    w.readings = [(8.0, ServerReading(w.url, "llama-server", metrics=m, slots=tuple({**s, "n_decoded": 0} for s in slots))),
                  (10.0, ServerReading(w.url, "llama-server", metrics=m, slots=slots))]
    assert _progress_line(One(), 0, 30, "GPU 0", w) == (
        "watching GPU 0: 12/30 s · SM 1380 MHz · mem 877 MHz · util 97% · 70 °C · PCIe RX 0.02 GB/s · "
        "llama-server: 3 in flight, 1 queued, 3/4 slots busy, 150 tok/s served (last 2 s)")
    w.readings.append((12.0, ServerReading(w.url, "llama-server", error="/metrics: connection refused")))
    assert "llama-server: not answering (/metrics: connection refused)" in _progress_line(One(), 0, 30, "GPU 0", w)
    o = ServerWatch("http://127.0.0.1:11434", "ollama")
    o.readings = [(0.0, ServerReading(o.url, "ollama", models=()))]
    assert _progress_line(One(), 0, 30, "GPU 0", o).endswith("Ollama: no request counters")


def test_a_url_where_nothing_answers_is_a_one_line_error(fake_gpu, capsys):
    code = main(["watch", "--seconds", "1", "--engine-url", closed_port_url()])
    err = capsys.readouterr().err
    assert code == 3 and "--engine-url" in err and "start the server" in err and "Traceback" not in err


def test_on_a_narrow_terminal_pcie_and_temperature_give_way_to_the_servers_figures():
    from doctor.commands.watch import ServerWatch, _progress_line
    from doctor.facts.engines.servers import ServerReading

    class One:
        elapsed_s = 3.0

        def latest(self, index):
            return GpuSample(t_s=3.0, sm_clock_mhz=1380, mem_clock_mhz=877, util_gpu_pct=97, temperature_c=70,
                             pcie_rx_mbs=20.0, reasons=())

    w = ServerWatch("http://127.0.0.1:8000", "vllm")
    w.readings = [(0.0, ServerReading(w.url, "vllm", metrics={"num_requests_running": 2.0, "num_requests_waiting": 0.0,
                                                             "generation_tokens_total": 100.0})),
                  (2.0, ServerReading(w.url, "vllm", metrics={"num_requests_running": 2.0, "num_requests_waiting": 0.0,
                                                             "generation_tokens_total": 700.0}))]
    full = _progress_line(One(), 0, 30, "GPU 0", w)
    assert full.endswith("PCIe RX 0.02 GB/s · vLLM: 2 in flight, 0 queued, 300 tok/s served (last 2 s)")
    narrow = _progress_line(One(), 0, 30, "GPU 0", w, width=125)
    assert narrow == ("watching GPU 0: 3/30 s · SM 1380 MHz · mem 877 MHz · util 97% · vLLM: 2 in flight, 0 queued, "
                      "300 tok/s served (last 2 s)") and len(narrow) < 125
    tiny = _progress_line(One(), 0, 30, "GPU 0", w, width=60)
    assert len(tiny) == 59 and tiny.endswith("…") and "°C" not in tiny
