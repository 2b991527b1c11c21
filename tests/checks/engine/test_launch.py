"""`engine-launch` (checks/engine/launch.py): the engine's own rules on its settings come from its adapter
(EngineAdapter.launch_notes), in its own words; the check carries no one engine's flags (issue 35, item 4)."""

from __future__ import annotations

import inspect
import re
from dataclasses import replace
from functools import lru_cache

import pytest
from conftest import ROOT

import checks.engine.launch as launch_check
from doctor.facts.replay import load_document
from doctor.model.engines import EngineLaunch
from doctor.model.findings import Status
from doctor.model.ids import CheckId, Engine
from doctor.run.pipeline import diagnose

ENGINES = ROOT / "fixtures" / "machines" / "engines"


@lru_cache(maxsize=None)
def loaded(name: str):
    return load_document(str(ENGINES / f"{name}.json"))


def launch_finding(name: str, engine: Engine, **settings):
    doc = loaded(name)
    model = doc.plan.engine_launch.model_path if doc.plan.engine_launch else None
    plan = replace(doc.plan, engine_launch=EngineLaunch(engine, "test", model_path=model, **settings))
    return next(f for f in diagnose(plan, doc.facts).findings if f.id == CheckId.ENGINE_LAUNCH)


def test_row_split_is_llama_cpps_warning_with_its_own_fix():
    f = launch_finding("v100-llamacpp-healthy", Engine.LLAMA_CPP, split_mode="row")
    assert f.status == Status.WARN and "-sm row was removed from llama.cpp" in f.summary
    assert "-sm layer" in f.fix and f.evidence["split_mode_source"].startswith("https://github.com/ggml-org/llama.cpp/")


def test_layer_split_and_flash_attention_on_pass():
    f = launch_finding("v100-llamacpp-healthy", Engine.LLAMA_CPP, split_mode="layer", flash_attn="on")
    assert f.status == Status.PASS and "split_mode_source" not in f.evidence


def test_a_quantized_v_cache_without_flash_attention_fails_under_llama_cpp():
    f = launch_finding("v100-llamacpp-healthy", Engine.LLAMA_CPP, cache_type_v="q8_0", cache_type_k="q8_0",
                       flash_attn="off")
    assert f.status == Status.FAIL and "llama.cpp refuses the context" in f.summary
    assert "-fa on" in f.fix and "quant_v_source" in f.evidence


def test_the_same_cache_under_ollama_is_ignored_and_said_in_ollamas_terms():
    f = launch_finding("t4-ollama-healthy", Engine.OLLAMA, cache_type_v="q8_0", cache_type_k="q8_0")
    assert f.status == Status.WARN and "Ollama ignores the cache type" in f.summary
    assert "OLLAMA_FLASH_ATTENTION=1" in f.fix and "-fa" not in f.fix and "-sm" not in f.fix


def test_flash_attention_off_warns_with_the_measured_cost():
    f = launch_finding("v100-llamacpp-healthy", Engine.LLAMA_CPP, flash_attn="off")
    assert f.status == Status.WARN and "flash attention is off" in f.summary and "x1.13" in f.summary
    assert f.fix.startswith("In llama-server's command line") and "-fa on" in f.fix


def test_the_check_carries_no_engines_flags():
    source = inspect.getsource(launch_check.run)  # its code; the docstring may name what the engines say
    for words in (r"-sm\b", r"\brow\b", r"OLLAMA_", r"-ctv", r"-fa\b", r"refuses"):
        assert not re.search(words, source), words


@pytest.mark.parametrize("engine", [Engine.LLAMA_CPP, Engine.OLLAMA])
def test_no_setting_no_note(engine):
    from doctor.engines import adapter

    assert adapter(engine).launch_notes(EngineLaunch(engine, "test"), "7.0") == ()
