"""A running engine server judged in its own terms (doctor/verdict/served.py through engine_probe.judge): pass at
its engine's share of the ceiling, warn below it with the engine's own fast-decode settings, warn on Ollama's partial
offload with num_ctx / OLLAMA_KV_CACHE_TYPE fixes, fail as an input error (exit 3) when it could not be asked."""

from __future__ import annotations

from dataclasses import replace

import pytest
from conftest import MACHINES

from doctor.facts.replay import load_document
from doctor.model.engine_probe import LlamaCppRun, ServerProbe
from doctor.model.engines import EngineServer
from doctor.model.findings import Status
from doctor.model.ids import CauseId, CheckId, Engine
from doctor.model.probe_results import ProbeReport
from doctor.verdict import engine_probe

V100_OLLAMA = MACHINES / "engine-hosts" / "v100-ollama-no-torch-healthy.json"
GIB = 1024 ** 3
SERVERS = {"ollama": EngineServer("http://127.0.0.1:11434", "ollama", "ollama", Engine.OLLAMA, "0.12.3", local=True),
           "vllm": EngineServer("http://127.0.0.1:8000", "openai", "vllm", Engine.VLLM, "0.19.1", local=True),
           "llama-server": EngineServer("http://127.0.0.1:8080", "openai", "llama-server", Engine.LLAMA_CPP, local=True),
           "lm-studio": EngineServer("http://127.0.0.1:1234", "openai", "lm-studio", Engine.LLAMA_CPP, local=True)}


def server_probe(flavour="ollama", tok_s=35.0, runs=(35.0, 35.2, 34.9), **kw):
    return ServerProbe(backend="fake", outcome="ok", url=SERVERS[flavour].url, flavour=flavour, model="m", clock="server",
                       runs=tuple(LlamaCppRun(128, r, r) for r in runs), median_tok_s=tok_s,
                       spread_pct=round(100 * (max(runs) - min(runs)) / tok_s, 2), asked_runs=3, local=True, **kw)


def judged(sp, flavour="ollama", target_gpu=None):
    doc = load_document(str(V100_OLLAMA))
    server = SERVERS[flavour] if sp.local else replace(SERVERS[flavour], local=False)
    plan = replace(doc.plan, engine_server=server, target_gpu=target_gpu)
    probe = ProbeReport(status="ok" if sp.outcome == "ok" else "failed", summary=sp.error or "ok",
                        engine=str(server.engine), server=sp)
    v = engine_probe.judge(probe, doc.facts, plan)
    return v, engine_probe.findings(probe, v, asked=False)[0]


def test_ollama_at_its_engines_share_of_the_ceiling_passes():
    v, f = judged(server_probe(tok_s=35.0, model_bytes=16 * GIB, resident_bytes=17 * GIB, vram_bytes=17 * GIB))
    assert v.ceiling_tok_s == pytest.approx(900e9 / (16 * GIB), abs=0.1) and v.efficiency == pytest.approx(0.67, abs=0.01)
    assert f.id == CheckId.DECODE_SPEED and f.status is Status.PASS and f.summary.startswith("Ollama: 35 tok/s")
    assert f.evidence["clock"] == "server" and f.evidence["url"] == "http://127.0.0.1:11434" and not f.fix


def test_ollama_below_its_share_warns_with_ollamas_own_settings():
    v, f = judged(server_probe(tok_s=20.0, runs=(20.0, 20.1, 19.9), model_bytes=16 * GIB))
    assert f.status is Status.WARN and "below what its engine reaches" in f.summary
    assert "OLLAMA_FLASH_ATTENTION=1" in f.fix and "systemctl edit ollama" in f.fix and "-fa" not in f.fix


def test_ollamas_partial_offload_warns_in_ollama_terms():
    sp = server_probe(tok_s=9.0, runs=(9.0, 9.1, 8.9), model_bytes=16 * GIB, resident_bytes=18 * GIB,
                      vram_bytes=9 * GIB, n_ctx=32768, parameters={"num_ctx": "32768"})
    v, f = judged(sp)
    assert any(c["cause"] == CauseId.CPU_OFFLOAD.value for c in v.causes)
    assert f.status is Status.WARN and "50% of the model on the GPU" in f.summary
    assert "PARAMETER num_ctx 16384" in f.fix and "OLLAMA_KV_CACHE_TYPE=q8_0" in f.fix and "-ngl" not in f.fix
    assert f.evidence["vram_bytes"] == 9 * GIB


def test_a_forced_num_gpu_is_named_as_the_cap():
    sp = server_probe(tok_s=9.0, runs=(9.0, 9.0, 9.0), resident_bytes=18 * GIB, vram_bytes=6 * GIB,
                      parameters={"num_gpu": "20"})
    _, f = judged(sp)
    assert "num_gpu 20 caps the layers" in f.fix


def test_vllm_below_expected_gets_vllm_args():
    v, f = judged(server_probe("vllm", tok_s=20.0, runs=(20.0, 20.0, 20.0), model_bytes=16 * GIB), "vllm")
    assert f.status in (Status.INFO, Status.WARN)
    assert "vLLM" in f.summary and ("--enforce-eager" in f.fix or "no measured share" in f.summary)


def test_a_spread_over_ten_percent_is_flagged():
    sp = server_probe(tok_s=35.0, runs=(30.0, 35.0, 40.0), model_bytes=16 * GIB)
    v, f = judged(sp)
    assert v.unsettled and "flagged above 10%" in f.summary and f.status is Status.WARN


def test_a_server_on_another_host_needs_its_card_named():
    sp = replace(server_probe(model_bytes=16 * GIB), local=False)
    v, f = judged(sp)
    assert v.ceiling_tok_s is None and "--target-gpu" in v.summary and f.status is Status.INFO
    v2, _ = judged(sp, target_gpu="t4")
    assert v2.ceiling_tok_s == pytest.approx(320e9 / (16 * GIB), abs=0.1)


def test_a_server_that_could_not_be_asked_is_an_input_error():
    sp = ServerProbe(backend="Ollama", outcome="unreachable", url="http://127.0.0.1:9",
                     error="cannot reach http://127.0.0.1:9: Connection refused; start the server")
    v, f = judged(sp)
    assert f.id == CheckId.PROBE and f.status is Status.FAIL and f.evidence["input_error"] == sp.error
    assert f.title == "Timed engine server"  # never identified: no engine to name


def test_the_engines_own_error_fails_without_being_an_input_error():
    sp = ServerProbe(backend="Ollama", outcome="error", url="http://127.0.0.1:11434", flavour="ollama",
                     error="Ollama answered the timed request with an error: model requires more system memory")
    _, f = judged(sp)
    assert f.status is Status.FAIL and "input_error" not in f.evidence and "more system memory" in f.summary


def test_an_lm_studio_server_is_answered_in_lm_studios_settings():
    """Issue 35 item 7: LM Studio runs llama.cpp, but its settings are its load settings and `lms load` flags."""
    v, f = judged(server_probe("lm-studio", tok_s=20.0, runs=(20.0, 20.0, 20.0), model_bytes=16 * GIB), "lm-studio")
    assert f.status is Status.WARN and "lms load MODEL --gpu max" in f.fix and "-ngl" not in f.fix
