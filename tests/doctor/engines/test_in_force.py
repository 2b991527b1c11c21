"""Which engine is judged, and why: --engine, the launch config, the model's format, what is installed, or assumed."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from doctor.engines import ADAPTERS, in_force
from doctor.facts.replay import load_document
from doctor.model.engines import EngineFacts, LlamaCppFacts, OllamaFacts
from doctor.model.ids import Engine

ROOT = Path(__file__).resolve().parents[3]
ENGINES = ROOT / "fixtures" / "machines" / "engines"
MACHINES = ROOT / "fixtures" / "machines"


def test_every_engine_has_an_adapter():
    assert set(ADAPTERS) == set(Engine)
    for engine, a in ADAPTERS.items():
        assert a.id == engine and a.formats and a.vocabulary.context and a.vocabulary.settings_live_in


def test_evidence_in_order():
    doc = load_document(str(ENGINES / "v100-llamacpp-healthy.json"))
    assert in_force(replace(doc.plan, engine_launch=None), doc.facts).engine == Engine.LLAMA_CPP  # a GGUF
    chosen = in_force(replace(doc.plan, engine=Engine.OLLAMA), doc.facts)
    assert (chosen.engine, chosen.why, chosen.assumed) == (Engine.OLLAMA, "--engine", False)
    assert in_force(doc.plan, doc.facts).why.startswith("the launch config")
    only_ollama = load_document(str(ENGINES / "p40-ollama-cuda-v13-only.json"))
    assert in_force(replace(only_ollama.plan, engine_launch=None), only_ollama.facts).engine == Engine.OLLAMA


def test_installed_engines_name_it_without_a_model():
    doc = load_document(str(MACHINES / "v100-pcie-16gb-healthy.json"))
    packages = {k: v for k, v in doc.facts.python.packages.items() if k != "exllamav2"}
    bare = replace(doc.facts, python=replace(doc.facts.python, packages=packages), model=None)
    llama = replace(bare, engines=EngineFacts(LlamaCppFacts(binaries={"llama-server": "/usr/bin/llama-server"})))
    assert in_force(doc.plan, llama).engine == Engine.LLAMA_CPP
    ollama = replace(bare, engines=EngineFacts(ollama=OllamaFacts(path="/usr/bin/ollama")))
    assert in_force(doc.plan, ollama).engine == Engine.OLLAMA
    vllm = replace(bare, engines=EngineFacts(), python=replace(bare.python, packages={**packages, "vllm": "0.21.0"}))
    assert in_force(doc.plan, vllm).engine == Engine.VLLM


def test_no_evidence_is_said_to_be_assumed():
    doc = load_document(str(MACHINES / "v100-pcie-16gb-healthy.json"))
    packages = {k: v for k, v in doc.facts.python.packages.items() if k not in ("exllamav2", "vllm")}
    bare = replace(doc.facts, python=replace(doc.facts.python, packages=packages), model=None, engines=EngineFacts())
    chosen = in_force(doc.plan, bare)
    assert chosen.assumed and chosen.engine == Engine.EXLLAMAV2 and "--engine" in chosen.why
    doc_x = in_force(doc.plan, replace(bare, python=replace(bare.python, packages={**packages, "exllamav2": "0.3.2"})))
    assert not doc_x.assumed and doc_x.engine == Engine.EXLLAMAV2


def test_the_server_watch_read_names_the_engine_for_each_kind():
    """watch --engine-url keeps the server's counters in facts.samples.server; a replay of that report (and the watch
    itself, before its plan says more) judges the engine behind it, not ExLlamaV2 assumed."""
    from doctor.model.samples import SampleSeries, ServerSeries

    doc = load_document(str(MACHINES / "v100-pcie-16gb-healthy.json"))
    bare = replace(doc.facts, model=None, python=replace(doc.facts.python, packages={}))
    assert in_force(doc.plan, bare).assumed
    for kind, engine, label in (("llama-server", Engine.LLAMA_CPP, "llama-server"), ("vllm", Engine.VLLM, "vLLM"),
                                ("ollama", Engine.OLLAMA, "Ollama"), ("tabbyapi", Engine.EXLLAMAV2, "TabbyAPI"),
                                ("lm-studio", Engine.LLAMA_CPP, "LM Studio")):
        watched = replace(bare, samples=SampleSeries("t", 10.0, 5.0, server=ServerSeries("http://127.0.0.1:1", kind)))
        chosen = in_force(doc.plan, watched)
        assert (chosen.engine, chosen.assumed) == (engine, False), kind
        assert chosen.why == f"the server at http://127.0.0.1:1 (watch --engine-url) answered as {label}"
        assert in_force(replace(doc.plan, engine=Engine.EXLLAMAV2), watched).why == "--engine"  # named wins
    unknown = replace(bare, samples=SampleSeries("t", 1.0, 5.0, server=ServerSeries("u", "openai-compatible")))
    assert in_force(doc.plan, unknown).assumed  # an OpenAI-compatible API names no engine
