"""What each adapter answers for the checks (issue 35): the parts of the CUDA stack it runs on, its driver floor,
its own rebuild for a card, the settings that keep it off the GPU, and its words for a fix."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from doctor.engines import ADAPTERS, adapter
from doctor.facts.replay import load_document
from doctor.model.engines import EngineFacts, LlamaCppFacts, OllamaFacts
from doctor.model.findings import Status
from doctor.model.ids import Engine
from doctor.model.unknown import Unknown

ROOT = Path(__file__).resolve().parents[3]
V100 = load_document(str(ROOT / "fixtures" / "machines" / "v100-pcie-16gb-healthy.json")).facts


def with_engines(engines: EngineFacts):
    return replace(V100, engines=engines)


def test_only_torch_engines_run_on_torch_and_only_exllamav2_needs_nvcc():
    parts = {e: a.cuda_stack for e, a in ADAPTERS.items()}
    assert parts[Engine.LLAMA_CPP] == parts[Engine.OLLAMA] == frozenset({"driver"})
    assert "nvcc" in parts[Engine.EXLLAMAV2] and "nvcc" not in parts[Engine.VLLM] and "torch" in parts[Engine.TRANSFORMERS]


@pytest.mark.parametrize("version, cc, branch", [("0.33.0", "7.0", 550), ("0.33.0", "6.1", 570), ("0.29.3", "7.0", None),
                                                 (None, "7.0", 550)])
def test_ollama_driver_floor_from_0_30(version, cc, branch):
    ollama = OllamaFacts("/usr/bin/ollama", version or Unknown("`ollama --version` failed"))
    floor = adapter(Engine.OLLAMA).driver_floor(cc, with_engines(EngineFacts(ollama=ollama)))
    assert (floor.branch if floor else None) == branch
    if floor:
        assert "17290" in floor.source and "CPU" in floor.summary


@pytest.mark.parametrize("value, forced", [("cpu_avx2", True), ('"cpu"', True), ("cuda_v12", False), ("", False)])
def test_ollama_llm_library_cpu_keeps_it_off_the_gpu(value, forced):
    env = {"OLLAMA_LLM_LIBRARY": value} if value else {}
    got = adapter(Engine.OLLAMA).kept_off_gpu(with_engines(EngineFacts(env=env)))
    assert (got is not None) == forced
    if got:
        assert got.status is Status.FAIL and "troubleshooting" in got.evidence["source"]


def test_llama_cpp_rebuild_in_the_install_s_own_terms():
    py_only = with_engines(EngineFacts(LlamaCppFacts(python_package="0.3.16")))
    fix, (line,) = adapter(Engine.LLAMA_CPP).rebuild_for_card("7.0", py_only)
    assert line == ('CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=70" pip install --force-reinstall '
                    "--no-cache-dir llama-cpp-python")
    binary = with_engines(EngineFacts(LlamaCppFacts({"llama-server": "/opt/bin/llama-server"})))
    fix, (line,) = adapter(Engine.LLAMA_CPP).rebuild_for_card("6.1", binary)
    assert "-DCMAKE_CUDA_ARCHITECTURES=61" in line and line.startswith("cmake -B build")


def test_transformers_warns_about_bitsandbytes_only_where_it_is_used():
    t = adapter(Engine.TRANSFORMERS)
    plain = replace(V100, python=replace(V100.python, packages={**V100.python.packages, "bitsandbytes": Unknown("not installed")}))
    assert t.judge_card("7.0", "Tesla V100", plain).status is Status.PASS
    bnb = replace(V100, python=replace(V100.python, packages={**V100.python.packages, "bitsandbytes": "0.48.1"}))
    assert t.judge_card("7.0", "Tesla V100", bnb).status is Status.WARN


def test_each_engine_words_its_memory_fix_in_its_own_settings():
    words = {e: a.vocabulary.fewer_bytes(8192) for e, a in ADAPTERS.items()}
    assert "-c 4096" in words[Engine.LLAMA_CPP] and "-ctk q8_0" in words[Engine.LLAMA_CPP]
    assert "PARAMETER num_ctx 4096" in words[Engine.OLLAMA] and "OLLAMA_KV_CACHE_TYPE=q8_0" in words[Engine.OLLAMA]
    assert "max_seq_len: 4096" in words[Engine.EXLLAMAV2] and "--max-model-len 4096" in words[Engine.VLLM]
    assert all("-ngl" not in w for e, w in words.items() if e != Engine.LLAMA_CPP)
