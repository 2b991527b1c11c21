"""The engine fixtures (fixtures/machines/engines/): llama.cpp, Ollama and TabbyAPI on V100, P40 and T4."""

from __future__ import annotations

from functools import lru_cache

import pytest
from conftest import ROOT

from checks.engine.choice import applies
from doctor.engines import ADAPTERS
from doctor.facts.replay import load_document
from doctor.knowledge.engines import UNPACKAGED_SUPPORT, runs_on
from doctor.model.findings import Status
from doctor.model.ids import CheckId
from doctor.model.plan import Plan
from doctor.model.source import replayed
from doctor.run.pipeline import diagnose

ENGINES = ROOT / "fixtures" / "machines" / "engines"
E, B, L, G = CheckId.ENGINE, CheckId.ENGINE_BUILD, CheckId.ENGINE_LAUNCH, CheckId.GGUF_BUDGET
P, W, F, S = Status.PASS, Status.WARN, Status.FAIL, Status.SKIP

EXPECTED = {
    "v100-llamacpp-healthy": ({E: P, B: P, L: P, G: P}, ["sm_70", "FP16 cuBLAS"]),
    "v100-llamacpp-no-sm70": ({E: P, B: F}, ["ggml was not compiled with any CUDA arch <= 700"]),
    "v100-llamacpp-partial-offload": ({L: W, G: P}, ["offloaded 48/65 layers to GPU"]),
    "v100-llamacpp-quant-kv-no-fa": ({L: F}, ["V cache quantization requires flash_attn"]),
    "v100-tabbyapi-main": ({E: F, B: S, G: S}, ["exl2-checkpoint"]),
    "p40-ollama-cuda-v13-only": ({E: F, B: F}, ["library=cpu", "cuda_v13"]),
    "p40-llamacpp-healthy": ({E: P, B: P, G: P}, ["1/64"]),
    "t4-ollama-healthy": ({E: P, B: P, L: P, G: P}, ["cuda_v12"]),
    "t4-llamacpp-27b-does-not-fit": ({G: F}, ["does not fit", "-ngl"]),
}


@lru_cache(maxsize=None)
def report(name: str):
    doc = load_document(str(ENGINES / f"{name}.json"))
    return diagnose(doc.plan, doc.facts, source=replayed(f"{name}.json"))


def test_every_fixture_has_expectations():
    assert {p.stem for p in ENGINES.glob("*.json")} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_engine_findings(name):
    want, words = EXPECTED[name]
    got = {f.id: f for f in report(name).findings}
    for cid, status in want.items():
        assert got[cid].status == status, (cid, got[cid].summary)
    text = " ".join(f"{f.summary} {f.fix}" for f in got.values() if f.id in want)
    for w in words:
        assert w in text, w


def test_the_fix_for_a_llama_cpp_or_ollama_plan_never_involves_torch():
    for name in EXPECTED:
        for f in report(name).findings:
            if f.id in (E, B, L, G):
                assert "torch" not in f.fix.lower() and "pip install torch" not in " ".join(f.commands), (name, f.id)


def test_engine_gap_is_estimated_from_the_ceiling_with_sources():
    f = {x.id: x for x in report("v100-llamacpp-healthy").findings}[E]
    est = f.evidence["engine_estimates_tok_s"]
    ceiling = {x.id: x for x in report("v100-llamacpp-healthy").findings}[CheckId.CEILING].evidence["ceiling_tok_s_empty_cache"]
    assert est["llama.cpp"] == round(ceiling * 0.66, 1) and est["exllamav2"] > est["llama.cpp"] > est["transformers"]
    assert all(f.evidence["estimate_sources"].values())


def test_budget_layers_that_fit_on_a_t4():
    f = {x.id: x for x in report("t4-llamacpp-27b-does-not-fit").findings}[G]
    fit = f.evidence["layers_that_fit"]
    assert 0 < fit < 65 and f"-ngl {fit}" in f.fix


def test_engine_checks_apply_to_a_gguf_path_only():
    assert applies(Plan(model_path="/m/x.gguf"), None) and not applies(Plan(model_path="/m/exl2"), None)


def test_no_engine_plan_leaves_the_old_reports_alone():
    healthy = load_document(str(ROOT / "fixtures" / "machines" / "v100-pcie-16gb-healthy.json"))
    ids = {f.id for f in diagnose(healthy.plan, healthy.facts, source=replayed("x.json")).findings}
    assert not ids & {E, B, L, G}


def test_runs_on_follows_the_binary_compatibility_rule():
    assert runs_on((60,), (), "6.1") == "sm_60"  # same major, lower minor
    assert runs_on((75, 80), (), "7.0") is None
    assert runs_on((75,), (61,), "7.0").startswith("compute_61")
    assert runs_on((80,), (), "8.6") == "sm_80"


def test_every_support_row_has_a_source_and_a_fix():
    rows = [r for a in ADAPTERS.values() for r in a.support] + list(UNPACKAGED_SUPPORT)
    assert len(rows) == 11 and all(a.support for a in ADAPTERS.values() if a.label != "Transformers")
    for row in rows:
        assert row.source.count("http") >= 1 and row.instead and row.min_cc[0].isdigit(), row.key
