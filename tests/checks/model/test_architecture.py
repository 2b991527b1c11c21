"""architecture: the engine in force, at its installed version, loads the model's architecture (pass, warn, fail, and
unknown with its reason). Model folders carry real config.json shapes (fixtures/models/); GGUFs are written headers.
Before (issue 39): an architecture no engine knows passed quant-format and the run exited 0."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from gguf_support import write_gguf
from model_support import MODELS, V100, findings

from doctor.model.engines import EngineFacts, LlamaCppFacts, OllamaFacts
from doctor.model.findings import Status

PASS, WARN, FAIL, INFO = Status.PASS, Status.WARN, Status.FAIL, Status.INFO


def machine(**packages: str):
    """The V100 fixture with these Python packages installed (exllamav2, vllm) and nothing else of theirs."""
    kept = {k: v for k, v in V100.python.packages.items() if k not in ("exllamav2", "vllm")}
    return replace(V100, python=replace(V100.python, packages={**kept, **packages}))


def with_engines(llama_cpp_python: str | None = None, ollama: str | None = None):
    lc = LlamaCppFacts(python_package=llama_cpp_python) if llama_cpp_python else LlamaCppFacts()
    ol = OllamaFacts(path="/usr/local/bin/ollama", version=ollama) if ollama else OllamaFacts()
    return replace(V100, engines=EngineFacts(llama_cpp=lc, ollama=ol))


def renamed(tmp_path: Path, fixture: str, arch: str) -> Path:
    """A real config.json shape with its architecture replaced by one no engine has."""
    dest = tmp_path / f"{fixture}-as-{arch}"
    dest.mkdir()
    config = json.loads((MODELS / fixture / "config.json").read_text())
    config["architectures"] = [arch]
    (dest / "config.json").write_text(json.dumps(config))
    return dest


def arch(path: Path, facts, **plan):
    return findings(path, facts, **plan)["architecture"]


@pytest.mark.parametrize("version,status,words", [
    ("0.3.2", PASS, "knows Qwen3ForCausalLM (since 0.3.0"),
    ("0.3.0", PASS, "since 0.3.0"),
    ("0.2.9", WARN, "ExLlamaV2 0.2.9 predates Qwen3ForCausalLM (added in 0.3.0)"),
])
def test_exllamav2_by_its_installed_version(version, status, words):
    f = arch(MODELS / "qwen3-32b", machine(exllamav2=version), engine="exllamav2")
    assert f.status is status and words in f.summary
    assert f.evidence["installed_version"] == version and f.evidence["architecture"] == "Qwen3ForCausalLM"
    if status is WARN:
        assert f.commands == ("pip install 'exllamav2>=0.3.0'",) and "0.3.0 or newer" in f.fix


def test_exllamav2_unknown_version_is_unknown_not_a_pass():
    f = arch(MODELS / "gemma-3-27b-it", machine(), engine="exllamav2")
    assert f.status is INFO and f.summary.startswith("unknown: ExLlamaV2 has Gemma3ForConditionalGeneration since 0.2.9")
    assert "not installed" in f.summary


def test_an_architecture_exllamav2_never_had_warns_whatever_the_version(tmp_path):
    f = arch(renamed(tmp_path, "qwen3-32b", "Qwen9ForCausalLM"), machine(exllamav2="0.3.2"), engine="exllamav2")
    assert f.status is WARN and "ExLlamaV2 does not know Qwen9ForCausalLM" in f.summary
    assert "Loading as LlamaForCausalLM" in f.fix and f.evidence["rows"] == []


def test_the_default_engine_is_judged_and_says_why(tmp_path):
    """No --engine: a config.json model is ExLlamaV2's by default, and the finding says why that engine."""
    f = arch(renamed(tmp_path, "qwen2.5-32b-instruct", "FooForCausalLM"), machine(exllamav2="0.3.2"))
    assert f.status is WARN and f.evidence["engine"] == "exllamav2" and f.evidence["chosen_because"]


@pytest.mark.parametrize("version,status", [("0.8.4", PASS), ("0.9.1", PASS), ("0.8.3", FAIL)])
def test_vllm_by_the_version_that_added_qwen3(version, status):
    f = arch(MODELS / "qwen3-32b", machine(vllm=version), engine="vllm")
    assert f.status is status, f.summary
    if status is FAIL:
        assert "vLLM 0.8.3 predates Qwen3ForCausalLM: it was added in vLLM 0.8.4 [S]" in f.summary
        assert f.commands == ("pip install 'vllm>=0.8.4'",)
    assert "vllm/issues/17327" in f.evidence["rows"][0]["source"]


def test_vllm_without_a_row_is_unknown_with_why(tmp_path):
    f = arch(renamed(tmp_path, "qwen3-32b", "FooForCausalLM"), machine(vllm="0.8.4"), engine="vllm")
    assert f.status is INFO and "no row for FooForCausalLM under vLLM" in f.summary


def test_llama_cpp_reads_the_ggufs_architecture(tmp_path):
    listed = write_gguf(tmp_path / "qwen3.gguf", arch="qwen3")
    made_up = write_gguf(tmp_path / "qwen9.gguf", arch="qwen9")
    assert arch(listed, with_engines(llama_cpp_python="0.3.36"), engine="llama.cpp").status is PASS
    f = arch(made_up, with_engines(llama_cpp_python="0.3.36"), engine="llama.cpp")
    assert f.status is FAIL and "unknown model architecture: 'qwen9'" in f.summary and "update llama.cpp" in f.fix
    f = arch(made_up, with_engines(), engine="llama.cpp")  # not installed here: the list still says no build had it
    assert f.status is WARN and "not an architecture llama.cpp lists" in f.summary
    f = arch(listed, with_engines(), engine="llama.cpp")  # a known architecture, but which build is installed?
    assert f.status is INFO and f.summary.startswith("unknown:") and "b5092" in f.summary


@pytest.mark.parametrize("version,status", [("0.6.0", PASS), ("0.12.3", PASS), ("0.5.13", FAIL)])
def test_ollama_by_the_release_that_added_gemma3(tmp_path, version, status):
    f = arch(write_gguf(tmp_path / "gemma3.gguf", arch="gemma3"), with_engines(ollama=version), engine="ollama")
    assert f.status is status, f.summary
    assert "ollama/releases/tag/v0.6.0" in f.evidence["rows"][0]["source"]


def test_ollama_shown_running_is_not_a_first_version(tmp_path):
    """Qwen3 is shown running on Ollama 0.6.6, which does not say 0.6.5 could not: unknown below it, never a failure."""
    f = arch(write_gguf(tmp_path / "qwen3.gguf", arch="qwen3"), with_engines(ollama="0.6.5"), engine="ollama")
    assert f.status is INFO and "not known" in f.summary


def test_an_engine_without_a_list_is_unknown():
    f = arch(MODELS / "qwen3-32b", machine(), engine="transformers")
    assert f.status is INFO and "no architecture list for Transformers" in f.summary


def test_a_gguf_under_a_config_engine_and_a_folder_under_llama_cpp_are_left_to_quant_format(tmp_path):
    assert arch(MODELS / "qwen3-32b", with_engines(), engine="llama.cpp").status is Status.SKIP
