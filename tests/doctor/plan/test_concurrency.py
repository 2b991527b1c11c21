"""Batched decode per plan row, speculative decoding and --users, on the story's model: what each engine batches,
totals that rise and per-stream speeds that fall where it does, the knee, and the answer for a team."""

from __future__ import annotations

import json

import jsonschema
from conftest import ROOT
from test_build import CONFIG, STORY, cards, plan

from doctor.facts.modeldir.config import parse_config
from doctor.knowledge.batch_scaling import BATCH_RATIOS, batch_ratio, ratio_at
from doctor.model.quant_plan import QuantCandidate, StreamsEstimate, TokS, knee, plan_to_dict, still_rising
from doctor.plan import concurrency as cc
from doctor.plan.build import build_plan
from doctor.plan.draft import draft_weights
from doctor.plan.speculative import GAMMA, expected_tokens
from doctor.render.plan_common import knee_cell, ladder_text
from doctor.render.plan_text import render_plan_text

SCHEMA = json.loads((ROOT / "doctor/schema/plan-1.json").read_text())


def rows_of(p):
    return {(r.option.label, r.cache): r for r in p.rows}


def test_the_story_v100_exl2_takes_streams_in_turn_and_llama_cpp_batches():
    """ExLlamaV2's dynamic generator is unpaged without flash-attn (sm_70): one stream at a time, total flat, each of
    N streams 1/N. llama.cpp's rows batch: total rises, each stream slows, until the knee."""
    p = plan("v100-pcie-16gb")
    rows = rows_of(p)
    story = rows["EXL2 3.75 bpw", "q8"]
    assert [c.streams for c in story.concurrency] == [1, 2, 4, 8]
    assert {c.total_tok_s.mid for c in story.concurrency} == {story.speed.mid}
    assert [c.per_stream_tok_s.mid for c in story.concurrency] == [round(story.speed.mid / n, 1) for n in (1, 2, 4, 8)]
    assert story.knee == 1 and knee_cell(story) == "1 (in turn)" and "max supported batch size is 1" in story.concurrency_source
    gguf = rows["GGUF Q3_K_M", "q4_0"]
    c = gguf.concurrency
    assert len(c) >= 4 and c[0].total_tok_s.mid == gguf.speed.mid
    assert all(b.total_tok_s.mid > a.total_tok_s.mid for a, b in zip(c, c[1:]))  # total rises
    assert all(b.per_stream_tok_s.mid < a.per_stream_tok_s.mid for a, b in zip(c, c[1:]))  # each stream slows
    assert all(x.total_tok_s.low <= x.total_tok_s.mid <= x.total_tok_s.high for x in c)
    assert c[-1].total_tok_s.mid < c[0].total_tok_s.mid * c[-1].streams  # not B x one stream: the compute grows
    assert "--parallel" in gguf.concurrency_source and "OLLAMA_NUM_PARALLEL" in gguf.concurrency_source
    # the first streams keep the whole context; past what the cache holds whole, it is split
    assert c[0].context_per_stream == 8192 and min(x.context_per_stream for x in c) >= cc.MIN_CONTEXT
    assert any(x.context_per_stream < 8192 for x in c) == (gguf.streams < c[-1].streams)


def test_with_flash_attn_exl2_batches_and_the_json_carries_it():
    p = build_plan("story", "test", CONFIG, STORY, cards("h200"), 8192)
    row = rows_of(p)["EXL2 3.75 bpw", "q8"]
    totals = [c.total_tok_s.mid for c in row.concurrency]
    assert len(totals) == 4 and totals == sorted(totals) and totals[-1] > 2 * totals[0]
    doc = plan_to_dict(p)
    jsonschema.validate(doc, SCHEMA)
    first = next(r for r in doc["rows"] if r["concurrency"])
    assert set(first["concurrency"][0]) == {"streams", "context_per_stream", "total_tok_s", "per_stream_tok_s"}
    assert set(first["concurrency"][0]["total_tok_s"]) == {"low", "mid", "high"}


def test_rows_that_do_not_fit_have_no_concurrency():
    p = plan("v100-pcie-16gb")
    assert all(not r.concurrency and r.knee == 0 for r in p.rows if not r.fits)


def test_the_knee_and_its_text():
    def e(n, total):
        return StreamsEstimate(n, 4096, TokS(total, total, total), TokS(total / n, total / n, total / n))

    flat_after_4 = (e(1, 40), e(2, 70), e(4, 110), e(8, 115))
    assert knee(flat_after_4) == 4 and not still_rising(flat_after_4)
    rising = (e(1, 40), e(2, 70), e(4, 110), e(8, 170))
    assert knee(rising) == 8 and still_rising(rising)
    p = plan("v100-pcie-16gb")
    text = render_plan_text(p, width=120)
    assert "knee" in text and "streams x context: total tok/s" in text
    gguf = rows_of(p)["GGUF Q3_K_M", "f16"]
    assert f"{gguf.knee} streams" in ladder_text(gguf)


def test_batch_ratios_come_from_their_tables():
    ampere = next(r for r in BATCH_RATIOS if r.family == "ampere")
    assert ampere.points[8].mid == round(8 * 156.56 / 583.77, 3)  # PR 15802's RTX 3090 Q4_0 row
    assert all(p.low <= p.mid <= p.high for p in ampere.points.values())
    row, note = batch_ratio("llama.cpp", "volta")
    assert row.family == "ampere" and "volta" in note  # no Volta figure: said so
    assert ratio_at(row, 3).mid == round((ampere.points[2].mid + ampere.points[4].mid) / 2, 3)
    assert ratio_at(row, 1).mid == 1.0
    _, exl2_note = batch_ratio("exllamav2", "ampere")
    assert "ExLlamaV2" in exl2_note


def test_hopper_ratios_are_this_projects_h200_measurement():
    """The H200 row is read off the recorded llama-batched-bench table (not typed in twice), tagged P (measured here),
    and its band reaches the served probe's ratio; a Hopper card no longer borrows Ampere's."""
    hopper, note = batch_ratio("llama.cpp", "hopper")
    assert hopper.family == "hopper" and hopper.confidence == "P" and note == ""
    table = (ROOT / hopper.source / "batched-bench.txt").read_text()
    s_tg = {int(c[2]): float(c[7]) for c in (line.strip("|").split("|") for line in table.splitlines())
            if len(c) == 10 and c[2].strip().isdigit()}
    for b in (2, 4, 8):
        assert hopper.points[b].mid == round(b * s_tg[1] / s_tg[b], 3)
    served = json.loads((ROOT / hopper.source / "probe-streams.json").read_text())["probe"]["streams"]["rounds"]
    tot = {r["streams"]: r["total_tok_s"] for r in served}
    for b in (2, 4):
        assert hopper.points[b].low <= b * tot[1] / tot[b] <= hopper.points[b].high + 0.001


def test_speculative_estimate_rises_with_acceptance_and_is_labelled():
    assert expected_tokens(0.0) == 1.0 and expected_tokens(1.0) == GAMMA + 1
    small = QuantCandidate("exl2", "d", None, bpw=4.0)
    draft_cfg = parse_config({"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "num_hidden_layers": 24,
                              "hidden_size": 896, "intermediate_size": 4864, "num_attention_heads": 14,
                              "num_key_value_heads": 2, "vocab_size": 151936, "max_position_embeddings": 32768,
                              "tie_word_embeddings": True, "torch_dtype": "bfloat16"})  # a 0.5B-class draft
    w = draft_weights(draft_cfg, small)
    assert 200e6 < w[0] < 600e6 and w[1] == 24
    p = plan("v100-pcie-16gb", draft_bytes=w[0], draft_name="org/small", draft_weights=w)
    for r in p.rows:
        if not r.fits:
            assert r.speculative is None
            continue
        s = r.speculative
        assert s is not None and s.low < s.mid < s.high and s.confidence == "K" and s.estimate
        assert "acceptance" in s.source and "2211.17192" in s.source
    story = rows_of(p)["EXL2 3.75 bpw", "q8"]
    assert story.speculative.high > story.speed.mid  # a cheap draft and high acceptance: faster
    assert "with draft" in render_plan_text(p, width=200)


def test_users_names_the_best_per_user_option_or_what_would():
    p = plan("v100-pcie-16gb", users=4, min_tok_s=10)
    a = next(x for x in p.answers if x.question.startswith("4 users"))
    assert a.row is not None and a.row.engine == "llama.cpp" and a.row.concurrency  # ExLlamaV2 takes turns on sm_70
    best = max((cc.at_streams(p_setting(), r, 4).per_stream_tok_s.mid for r in p.rows
                if r.fits and r.streams >= 4 and r.engine == "llama.cpp"), default=0)
    assert "each" in a.sentence and best <= float(a.sentence.split(": ")[1].split(" tok/s")[0]) + 0.05
    none = plan("v100-pcie-16gb", users=8, min_tok_s=60)
    n = next(x for x in none.answers if x.question.startswith("8 users"))
    assert n.row is None and n.sentence.startswith("none reaches 8 users") and "second card" in n.sentence


def p_setting():
    from doctor.knowledge.arithmetic.model_bytes import dims
    from doctor.plan.rows import Setting

    return Setting(CONFIG, dims(CONFIG), cards("v100-pcie-16gb"))
