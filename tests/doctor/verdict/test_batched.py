"""Batched decode for the report's model (doctor/verdict/batched.py): the story's ExLlamaV2 on a V100 takes the
streams in turn and says why; llama.cpp and Ollama batch (total rising, each stream slowing, the knee named); what
decides ExLlamaV2's batching is flash-attn as the facts show it, not the card alone; Unknown where nothing is known."""

from __future__ import annotations

import json
from dataclasses import replace

from conftest import MACHINES, ROOT

from doctor.engines import in_force
from doctor.facts.modeldir.config import parse_config
from doctor.facts.replay import load_document
from doctor.knowledge.exl2_batching import INSTALL_FIX
from doctor.knowledge.gpus import spec_for_key
from doctor.model.batched import NO_MODEL, BatchedDecode
from doctor.model.quant_plan import QuantCandidate
from doctor.model.unknown import Unknown
from doctor.plan import concurrency as cc
from doctor.plan.build import build_plan
from doctor.run.pipeline import diagnose
from doctor.verdict.batched import batched_decode

STORY_MODEL = str(ROOT / "fixtures/models/qwen2-27b-exl2-3.75bpw")


def story(machine: str = "v100-pcie-16gb-healthy.json", **plan):
    """The reference story's setup on a recorded machine: 27B EXL2 3.75 bpw, Q8 cache, 8192 tokens."""
    loaded = load_document(str(MACHINES / machine))
    p = replace(loaded.plan, model_path=STORY_MODEL, max_seq_len=8192, cache_mode="q8", **plan)
    return diagnose(p, loaded.facts)


def replayed(name: str):
    loaded = load_document(str(MACHINES / name))
    return diagnose(loaded.plan, loaded.facts)


def totals(b: BatchedDecode) -> list[float]:
    return [e.total_tok_s.mid for e in b.entries]


def test_the_story_on_a_v100_is_flat_because_exllamav2_runs_unpaged_without_flash_attn():
    b = story().batched_decode
    assert isinstance(b, BatchedDecode)
    assert (b.engine, b.option, b.cards, b.cache, b.context) == ("exllamav2", "EXL2 3.75 bpw", ("v100-pcie-16gb",), "q8", 8192)
    assert [e.streams for e in b.entries] == [1, 2, 4, 8] and all(e.context_per_stream == 8192 for e in b.entries)
    assert len(set(totals(b))) == 1 and not b.batches and b.knee == 1  # flat total: the streams take turns
    one = b.single
    assert [e.per_stream_tok_s.mid for e in b.entries] == [round(one.mid / n, 1) for n in (1, 2, 4, 8)]
    assert all(e.total_tok_s.low <= e.total_tok_s.mid <= e.total_tok_s.high for e in b.entries)
    # the reason, with its source: the dynamic generator unpaged, and what the facts say of flash-attn
    assert "max supported batch size is 1" in b.source and cc.DYNAMIC_PY in b.source
    assert b.attention == "flash-attn is not installed"
    assert any("flash-attn 2 needs sm_80" in s for s in b.serve)


def test_the_single_stream_is_the_plans_own_row():
    """One physics: the first rung is the plan's single-stream speed for the same option, card, cache and context."""
    config = parse_config(json.loads((ROOT / STORY_MODEL / "config.json").read_text()))
    p = build_plan("story", "test", config, (QuantCandidate("exl2", "EXL2 3.75 bpw", None, bpw=3.75),),
                   (spec_for_key("v100-pcie-16gb"),), 8192, exl2_flash_attn=False)
    row = next(r for r in p.rows if r.cache == "q8")
    b = story().batched_decode
    assert (b.single.low, b.single.mid, b.single.high) == (row.speed.low, row.speed.mid, row.speed.high)


def test_flash_attn_that_cannot_run_on_the_card_still_leaves_the_streams_in_turn():
    b = story("v100-flash-attn-2.json").batched_decode
    assert isinstance(b, BatchedDecode) and not b.batches and b.knee == 1
    assert b.attention == "flash-attn 2.6.3 is installed but cannot run on sm_70"


def test_on_an_h200_the_facts_decide_not_the_cards_sm():
    """sm_90 runs flash-attn, but the recorded H200 has none installed: unpaged, in turn. With flash-attn 2.6.3 in
    the facts the same card batches: the total rises and each stream slows."""
    bare = story("h200-live.json").batched_decode
    assert isinstance(bare, BatchedDecode) and not bare.batches and len(set(totals(bare))) == 1
    assert bare.serve == (INSTALL_FIX,)  # sm_90 runs it: installing flash-attn 2.5.7+ is the fix
    loaded = load_document(str(MACHINES / "h200-live.json"))
    python = replace(loaded.facts.python, packages={**loaded.facts.python.packages, "flash-attn": "2.6.3"})
    facts = replace(loaded.facts, python=python)
    plan = replace(loaded.plan, model_path=STORY_MODEL, max_seq_len=8192, cache_mode="q8")
    b = diagnose(plan, facts).batched_decode
    assert isinstance(b, BatchedDecode) and b.batches and "paged, batched" in b.attention
    t = totals(b)
    assert t == sorted(t) and t[-1] > 2 * t[0]
    per = [e.per_stream_tok_s.mid for e in b.entries]
    assert per == sorted(per, reverse=True) and per[0] > per[-1]
    assert b.single.mid > bare.single.mid  # no repeat_kv copy with flash-attn: one stream is faster too
    assert any(s.startswith("TabbyAPI: cache_size: ") for s in b.serve)
    # an old flash-attn without the paged mode does not batch
    old = replace(facts, python=replace(python, packages={**python.packages, "flash-attn": "2.5.6"}))
    b_old = diagnose(plan, old).batched_decode
    assert isinstance(b_old, BatchedDecode) and not b_old.batches and "older than the 2.5.7" in b_old.attention


def test_a_planning_target_batches_as_tabbyapi_installs_it_there():
    b = story(target_gpu="a100-40gb").batched_decode
    assert isinstance(b, BatchedDecode) and b.batches and b.cards == ("a100-40gb",)
    assert b.attention.startswith("planning for A100")


def test_llama_cpp_on_a_v100_batches_its_slots_and_names_the_knee():
    b = replayed("engines/v100-llamacpp-healthy.json").batched_decode
    assert isinstance(b, BatchedDecode) and b.engine == "llama.cpp" and b.option == "GGUF Q4_K_M" and b.batches
    t = totals(b)
    assert len(t) >= 4 and all(y > x for x, y in zip(t, t[1:]))  # total rises
    per = [e.per_stream_tok_s.mid for e in b.entries]
    assert all(y < x for x, y in zip(per, per[1:]))  # each stream slows
    assert t[-1] < t[0] * b.entries[-1].streams  # not N x one stream: the compute grows with the batch
    assert b.knee in [e.streams for e in b.entries]
    at = next(e for e in b.entries if e.streams == b.knee)
    assert b.serve == (f"llama-server --parallel {b.knee} -c {b.knee * at.context_per_stream} (each of the {b.knee} "
                       f"slots gets -c / {b.knee} = {at.context_per_stream} tokens)",)
    assert "--parallel N" in b.source and b.attention == ""


def test_ollama_on_a_t4_batches_with_its_own_setting():
    b = replayed("engines/t4-ollama-healthy.json").batched_decode
    assert isinstance(b, BatchedDecode) and b.engine == "ollama" and b.cards == ("t4",)
    t = totals(b)
    assert all(y > x for x, y in zip(t, t[1:]))
    assert b.serve[0].startswith(f"Ollama: OLLAMA_NUM_PARALLEL={b.knee} ") and "num_ctx x" in b.serve[0]
    assert b.context == 4096 and not any(a.startswith("context") for a in b.assumed)  # the launch's num_ctx 4096


def test_without_a_context_llama_servers_default_is_assumed_and_said():
    loaded = load_document(str(MACHINES / "engines/v100-llamacpp-healthy.json"))
    plan = replace(loaded.plan, engine_launch=replace(loaded.plan.engine_launch, n_ctx=None), max_seq_len=None)
    b = diagnose(plan, loaded.facts).batched_decode
    assert isinstance(b, BatchedDecode) and b.context == 4096
    assert any(a.startswith("context 4096 (llama-server's default") for a in b.assumed)


def test_the_knee_is_where_another_doubling_adds_little():
    """Built from the ladder's own figures: the knee is the fewest streams within 10% of the highest total."""
    b = replayed("engines/t4-ollama-healthy.json").batched_decode
    top = max(totals(b))
    assert b.knee == min(e.streams for e in b.entries if e.total_tok_s.mid >= 0.9 * top)


def test_no_model_is_unknown_and_says_why():
    b = replayed("v100-pcie-16gb-healthy.json").batched_decode
    assert b == Unknown(NO_MODEL)


def test_a_model_that_does_not_fit_is_unknown_not_a_figure():
    b = replayed("engines/t4-llamacpp-27b-does-not-fit.json").batched_decode
    assert isinstance(b, Unknown) and "does not fit t4" in b.reason and "GB over" in b.reason


def test_no_card_and_an_unknown_card_are_unknown():
    loaded = load_document(str(MACHINES / "no-nvml.json"))
    plan = replace(loaded.plan, model_path=STORY_MODEL, max_seq_len=8192, cache_mode="q8")
    facts = diagnose(plan, loaded.facts).facts
    b = batched_decode(facts, plan, in_force(plan, facts))
    assert isinstance(b, Unknown) and "no GPU here" in b.reason


def test_an_engine_whose_batching_is_not_modelled_is_unknown():
    loaded = load_document(str(MACHINES / "v100-pcie-16gb-healthy.json"))
    plan = replace(loaded.plan, model_path=STORY_MODEL, max_seq_len=8192, cache_mode="q8", engine="vllm")
    b = diagnose(plan, loaded.facts).batched_decode
    assert isinstance(b, Unknown) and "not modelled here" in b.reason


def test_a_probe_without_config_json_shares_its_measured_speed_only_where_the_streams_take_turns():
    """The recorded H200 run (ExLlamaV2, no flash-attn): the measured speed, its spread as the range, shared out. With
    flash-attn in the facts ExLlamaV2 would batch, and that needs the model's shape: Unknown, asking for --model."""
    from doctor.run.probe_stage import with_probe
    from doctor.verdict.batched import measured_in_turn

    path = str(ROOT / "doctor/examples/h200-synthetic-gptq.json")
    loaded = load_document(path)
    report = with_probe(diagnose(loaded.plan, loaded.facts), loaded.report.probe)
    b, v = report.batched_decode, report.verdict
    assert isinstance(b, BatchedDecode) and not b.batches and b.knee == 1 and b.cards == ("h200",)
    assert b.single.mid == round(v.measured_tok_s, 1) and b.single.low < b.single.mid < b.single.high
    assert [e.per_stream_tok_s.mid for e in b.entries] == [round(b.single.mid / n, 1) for n in (1, 2, 4, 8)]
    assert "the probe's" in b.source and "max supported batch size is 1" in b.source
    python = replace(loaded.facts.python, packages={**loaded.facts.python.packages, "flash-attn": "2.6.3"})
    facts = replace(loaded.facts, python=python)
    again = measured_in_turn(Unknown(NO_MODEL), loaded.report.probe, v, facts, loaded.plan)
    assert isinstance(again, Unknown) and "give --model DIR" in again.reason
    assert measured_in_turn(b, loaded.report.probe, v, facts, loaded.plan) is b  # a model's estimate is kept


def test_a_bug_in_the_estimate_is_said_and_the_report_stands(monkeypatch):
    import doctor.verdict.batched as batched

    def broken(*args, **kw):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(batched, "row", broken)
    report = story()
    assert report.batched_decode == Unknown("the estimate failed: ZeroDivisionError: division by zero (a bug; please "
                                            "report it)")
    assert report.findings and report.finding(report.findings[0].id) is not None  # the checks' findings are all there
