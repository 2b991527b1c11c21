"""The time model's constants: each names its source (a file of this repository that exists, or the story) and its
confidence, spans low <= mid <= high, and the refitted efficiencies are found as the plan looks them up."""

from __future__ import annotations

import re

import pytest
from conftest import ROOT

from doctor.knowledge import decode_context as dc
from doctor.knowledge.engine_efficiency import efficiency

COSTS = [dc.EXL2_REPEAT_KV, dc.LLAMA_F16_KV, *dc.LLAMA_QUANT_KV.values()]
EFFS = [*dc.TIME_MODEL_EFFICIENCIES, *dc.GGUF_TYPE_EFFICIENCIES.values()]


@pytest.mark.parametrize("c", COSTS, ids=lambda c: c.key)
def test_each_context_cost_names_an_existing_result_and_spans_its_figures(c):
    assert c.value.low <= c.value.mid <= c.value.high and c.confidence in ("P", "S", "K")
    assert "issue28-accuracy/README.md" in c.source and (ROOT / "benchmarks/results/issue28-accuracy/README.md").is_file()


@pytest.mark.parametrize("e", EFFS, ids=lambda e: f"{e.engine}-{e.family}-{e.mid}")
def test_each_refitted_efficiency_names_its_source(e):
    assert 0 < e.low <= e.mid <= e.high <= 1 and e.how
    for path in re.findall(r"benchmarks/results/[\w./-]+\.md", e.source):
        assert (ROOT / path).is_file(), path
    assert "issue28-accuracy" in e.source or "reference story" in e.source


def test_off_the_h200_ranges_are_wider_and_scaling_is_said():
    assert dc.QUANT_KV_ELSEWHERE.low < 1 < dc.QUANT_KV_ELSEWHERE.high
    assert dc.LLAMA_F16_KV_ELSEWHERE.high > dc.LLAMA_F16_KV.value.high
    assert "by bandwidth" in dc.QUANT_KV_SCALING and "estimate" in dc.QUANT_KV_SCALING


@pytest.mark.parametrize("engine, fam, gguf_type, mid, note", [
    ("exllamav2", "hopper", None, 0.29, ""),
    ("exllamav2", "volta", None, 0.95, ""),
    ("exllamav2", "turing", None, 0.95, "no exllamav2 figure for turing: the volta figure is assumed"),
    ("llama.cpp", "hopper", "Q4_K_M", 0.296, ""),
    ("llama.cpp", "hopper", "Q4_0", 0.339, ""),
    ("llama.cpp", "hopper", "q4_0", 0.339, ""),
    ("llama.cpp", "volta", "Q4_0", 0.66, ""),  # no Q4_0 figure on a V100: the family's
    ("exllamav2", "pascal-fp16-slow", None, 0.06, ""),  # no refit: engine_efficiency's row
])
def test_the_plan_finds_the_refitted_row_else_the_familys(engine, fam, gguf_type, mid, note):
    row, said = dc.time_model_efficiency(engine, fam, gguf_type)
    assert (row.mid, said) == (mid, note)


def test_a_family_without_any_row_falls_back_as_engine_efficiency_does():
    assert dc.time_model_efficiency("llama.cpp", "ampere") == efficiency("llama.cpp", "ampere")
