"""flash-attn judged per engine (issue 35): ExLlamaV2 calls it once installed (fail on a card below cc 8.0),
Transformers only when asked (a warning with its own fix, no EXLLAMA words), llama.cpp, Ollama and vLLM never (pass)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from conftest import MACHINES

from checks.base import CheckContext
from checks.env.flash_attn import CHECK
from doctor.engines import ADAPTERS
from doctor.facts.replay import load_document
from doctor.model.findings import Status
from doctor.model.ids import Engine

T4_TRANSFORMERS = MACHINES / "engine-hosts" / "t4-transformers-bnb.json"


def judged(engine: Engine | None, flash_attn: str = "2.7.4"):
    doc = load_document(str(T4_TRANSFORMERS))
    py = doc.facts.python
    facts = replace(doc.facts, python=replace(py, packages={**py.packages, "flash-attn": flash_attn}))
    return CHECK.run(CheckContext(facts=facts, plan=replace(doc.plan, engine=engine)))


@pytest.mark.parametrize("engine, status", [(Engine.EXLLAMAV2, Status.FAIL), (Engine.TRANSFORMERS, Status.WARN),
                                            (Engine.LLAMA_CPP, Status.PASS), (Engine.OLLAMA, Status.PASS),
                                            (Engine.VLLM, Status.PASS)])
def test_flash_attn_2_on_a_t4_per_engine(engine, status):
    f = judged(engine)
    assert f.status is status, f.summary
    if engine != Engine.EXLLAMAV2:
        assert "EXLLAMA" not in f.fix + " ".join(f.commands) and "ExLlamaV2" not in f.summary


def test_transformers_fix_is_its_attn_implementation():
    f = judged(Engine.TRANSFORMERS)
    assert 'attn_implementation="sdpa"' in f.fix and f.commands == ("pip uninstall -y flash-attn",)


def test_every_engine_words_the_flash_attn_refusal_in_its_terms():
    for engine, a in ADAPTERS.items():
        fix, commands = a.flash_attn_refusal("7.5")
        assert "7.5" in fix and "V100" not in fix
        assert ("EXLLAMA_NO_FLASH_ATTN" in " ".join(commands)) == a.uses_exllamav2, engine


def test_the_refusal_names_the_card_the_report_is_about():
    """Issue 35 item 6: the T4 is called the T4, never "older cards such as the V100"."""
    for engine in (Engine.EXLLAMAV2, Engine.TRANSFORMERS):
        f = judged(engine)
        assert "this card (Tesla T4) is cc 7.5" in f.fix and "V100" not in f.fix, engine


def test_a_probe_that_crashed_in_flash_attn_names_its_card():
    from doctor.model.ids import FailureKind
    from doctor.model.probe_results import ProbeReport
    from doctor.verdict.failures import failure_finding

    probe = ProbeReport(status="failed", summary="FlashAttention only supports Ampere GPUs or newer.",
                        error_kind=FailureKind.FLASH_ATTN)
    named = failure_finding(probe, card=("7.5", "Tesla T4"))
    assert "this card (Tesla T4) is cc 7.5" in named.fix and "V100" not in named.fix
    assert "such as the V100" in failure_finding(probe).fix  # no card known: the example stays an example
