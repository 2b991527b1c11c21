"""Each engine's answer on the cards it supports and the ones it does not (pass, warn, fail), with its sources."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from doctor.engines import adapter
from doctor.facts.replay import load_document
from doctor.model.findings import Status
from doctor.model.ids import Engine

ROOT = Path(__file__).resolve().parents[3]
V100 = load_document(str(ROOT / "fixtures" / "machines" / "v100-pcie-16gb-healthy.json")).facts


def with_vllm(version: str | None):
    packages = {k: v for k, v in V100.python.packages.items() if k != "vllm"}
    if version:
        packages["vllm"] = version
    return replace(V100, python=replace(V100.python, packages=packages))


@pytest.mark.parametrize("version,cc,status,words", [
    ("0.21.0", "7.0", Status.FAIL, "0.19.x is the last release"),
    ("0.19.1", "7.0", Status.PASS, "needs 7.0+"),
    ("0.21.0", "7.5", Status.PASS, "needs 7.5+"),
    (None, "7.0", Status.FAIL, "vLLM 0.20 and newer"),
    ("0.19.1", "6.1", Status.FAIL, "no vLLM release supports"),
])
def test_vllm_floor_by_version(version, cc, status, words):
    j = adapter(Engine.VLLM).judge_card(cc, "the card", with_vllm(version))
    assert j.status is status and words in j.summary and j.evidence["source"]
    if status is Status.FAIL and cc == "7.0":
        assert "pip install 'vllm<0.20'" in j.commands


@pytest.mark.parametrize("engine,cc,status", [
    (Engine.LLAMA_CPP, "6.1", Status.PASS), (Engine.LLAMA_CPP, "7.0", Status.PASS),
    (Engine.EXLLAMAV2, "7.0", Status.PASS), (Engine.EXLLAMAV2, "5.2", Status.FAIL),
    (Engine.TABBYAPI, "7.0", Status.FAIL), (Engine.TABBYAPI, "7.5", Status.FAIL), (Engine.TABBYAPI, "8.6", Status.PASS),
    (Engine.OLLAMA, "7.0", Status.PASS),
])
def test_support_floor(engine, cc, status):
    assert adapter(engine).judge_card(cc, "the card", V100).status is status


def test_only_torch_engines_say_they_use_torch():
    assert not adapter(Engine.LLAMA_CPP).uses_torch and not adapter(Engine.OLLAMA).uses_torch
    assert adapter(Engine.EXLLAMAV2).uses_torch and adapter(Engine.VLLM).uses_torch
    assert [e for e in Engine if adapter(e).uses_exllamav2] == [Engine.EXLLAMAV2]
