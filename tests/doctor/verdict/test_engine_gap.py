"""The engine gap in the verdict, on recorded probe results (fixtures/probes/engines/: each file's note says whether
it was recorded on the device or constructed from the reference story): measured (another engine run on the same
shape), estimated (nothing else installed: ceiling x share, with its source), and no gap (the user's engine is the
fastest here). Also the Transformers verdict's own attribution."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from doctor.knowledge.arithmetic.gguf_budget import quant_weights
from doctor.model.engine_probe import EngineMeasurement, LlamaCppProbe, TransformersProbe
from doctor.model.gguf import GgufShape
from doctor.model.serialize import from_jsonable
from doctor.verdict import llamacpp, transformers
from doctor.verdict.engine_gap import engine_gap

ENGINES = Path(__file__).resolve().parents[3] / "fixtures" / "probes" / "engines"


def load(name: str) -> dict:
    return json.loads((ENGINES / f"{name}.json").read_text())


def transformers_verdict(name: str) -> transformers.TransformersVerdict:
    doc = load(name)
    card = doc["card"]
    probe = from_jsonable(TransformersProbe, doc["probe"])
    measured = tuple(from_jsonable(EngineMeasurement, m) for m in doc["measurements"])
    return transformers.attribute(probe, card["bandwidth_gbs"], card["cc"], card["fp16_slow"], measured)


def test_measured_gap_gives_both_figures_the_story_stage_1():
    v = transformers_verdict("v100-transformers-nf4-measured-gap")
    gap = v.engine_gap
    assert gap is not None and gap.fastest is not None
    exl = next(o for o in gap.others if o.engine == "exllamav2")
    assert (exl.tok_s, exl.basis) == (25.0, "measured")
    assert gap.summary.startswith("exllamav2 would decode x6.2 faster here (25 vs 4 tok/s, measured)")
    assert "EXL2 4.25 bpw" in gap.summary and "14.30 GB per token" in gap.summary
    llama = next(o for o in gap.others if o.engine == "llama.cpp")  # not installed beside it: still an estimate
    assert llama.basis == "estimated upper bound" and llama.tok_s == round(900 / 14 * 0.66, 1) and "§1.4" in llama.source
    assert "launch-bound here (GPU busy 31%)" in llama.how  # the story's Transformers run was 31% busy


def test_estimated_gap_names_each_share_and_its_source():
    v = transformers_verdict("v100-transformers-nf4-estimated-gap")
    gap = v.engine_gap
    assert gap is not None and all(o.basis.startswith("estimated") for o in gap.others)
    ceiling = 900e9 / 14e9
    assert v.ceiling_tok_s == round(ceiling, 1) and v.efficiency == round(4.0 / ceiling, 3)
    exl = next(o for o in gap.others if o.engine == "exllamav2")
    assert exl.tok_s == round(ceiling * 0.90, 1) and "§3.4" in exl.source and "90% of the 64.3 tok/s ceiling" in exl.how
    assert gap.summary.startswith(f"exllamav2 would decode x{exl.tok_s / 4.0:.1f} faster here ({exl.tok_s:g} vs 4 tok/s, {exl.basis})")


def test_no_gap_when_the_users_engine_is_the_fastest_here():
    doc = load("h200-llamacpp-q4km-no-gap")
    probe = from_jsonable(LlamaCppProbe, doc["probe"])
    shape = GgufShape(*doc["gguf"]["shape"])
    card = doc["card"]
    v = llamacpp.attribute(probe, shape, quant_weights(shape, doc["gguf"]["quant"]), card["bandwidth_gbs"], card["cc"])
    gap = v.engine_gap
    assert gap is not None and gap.gap == 1.0 and gap.summary.startswith("llama.cpp is the fastest engine here")
    exl = next(o for o in gap.others if o.engine == "exllamav2")
    assert exl.tok_s < probe.median_tok_s and "issue17-h200" in exl.source  # this project's own H200 row


def test_an_estimate_beside_a_launch_bound_decode_is_an_upper_bound():
    """Issue 35: on the H200 the estimates read 830.8 (llama.cpp) and 750.4 (EXL2) beside a launch-bound Transformers
    decode; --compare-engines then measured 686.0 and 403.3. An estimate from the bandwidth share says it is a bound."""
    plain = engine_gap("transformers", 100.0, "hopper", 2680.0)
    bounded = engine_gap("transformers", 100.0, "hopper", 2680.0, bound="an upper bound: launch-bound here")
    assert all(o.basis == "estimated" for o in plain.others)
    assert all(o.basis == "estimated upper bound" and o.how.endswith("launch-bound here") for o in bounded.others)
    assert ", estimated upper bound)" in bounded.summary.split(":")[0]


def test_a_measured_engine_that_failed_falls_back_to_the_estimate():
    failed = EngineMeasurement("llama.cpp", "Q4_K_M GGUF", "died-silently", None, 15_900_000_000, "synthetic", "SIGSEGV")
    gap = engine_gap("transformers", 4.0, "volta", 64.3, (failed,))
    assert next(o for o in gap.others if o.engine == "llama.cpp").basis == "estimated"


def test_about_as_fast_is_not_called_a_gap():
    near = EngineMeasurement("exllamav2", "4-bit GPTQ", "ok", 4.4, 14_000_000_000, "synthetic")
    gap = engine_gap("transformers", 4.0, "volta", 10.0, (near,))
    assert gap.summary.startswith("exllamav2 is about as fast here (4.4 vs 4 tok/s, measured)")


def test_the_transformers_verdict_names_its_own_causes():
    v = transformers_verdict("v100-transformers-nf4-measured-gap")
    causes = {c["cause"]: c["text"] for c in v.causes}
    assert "bitsandbytes NF4 kernels: here x16.1 below the ceiling" in causes["kernel-path"]
    assert "busy only 31%" in causes["launch-bound"]
    assert "warm-up decoded at 3.1 tok/s" in causes["host-bound"]
    assert v.summary.startswith("4 tok/s with Transformers + bitsandbytes NF4 = 6% of the 64.3 tok/s ceiling")


def test_a_failed_or_uncounted_probe_is_not_judged():
    doc = load("v100-transformers-nf4-estimated-gap")
    probe = from_jsonable(TransformersProbe, doc["probe"])
    dead = transformers.attribute(replace(probe, outcome="died-silently", median_tok_s=None, error="SIGSEGV"), 900, "7.0")
    assert dead.outcome == "died-silently" and "not a slow engine" in dead.summary and dead.engine_gap is None
    blind = transformers.attribute(replace(probe, bytes_per_token=None), 900, "7.0")
    assert blind.ceiling_tok_s is None and "no ceiling" in blind.summary


def test_on_a_p40_the_fp16_rate_is_named_and_llama_cpp_leads_the_estimate():
    doc = load("v100-transformers-nf4-estimated-gap")
    probe = replace(from_jsonable(TransformersProbe, doc["probe"]), median_tok_s=1.0)
    v = transformers.attribute(probe, 346.0, "6.1", fp16_slow=True)
    assert any("FP16 at 1/64" in c["text"] and "exllamav2/issues/40" in c["source"] for c in v.causes)
    assert v.engine_gap is not None and v.engine_gap.fastest is not None
    assert v.engine_gap.fastest.engine == "llama.cpp"  # 61% on Pascal against ExLlamaV2's 6%
    assert not any("FP16 at 1/64" in c["text"] for c in transformers_verdict("v100-transformers-nf4-estimated-gap").causes)



def test_a_recorded_measured_gap_on_the_h200_exl2_against_gguf():
    """One device call, the same 27B shape: llama.cpp Q4_K_M 96.25 tok/s, ExLlamaV2 EXL2 4.0 bpw 106.1."""
    doc = load("h200-llamacpp-vs-exl2-measured")
    probe = from_jsonable(LlamaCppProbe, doc["probe"])
    shape = GgufShape(*doc["gguf"]["shape"])
    measured = tuple(from_jsonable(EngineMeasurement, m) for m in doc["measurements"])
    v = llamacpp.attribute(probe, shape, quant_weights(shape, doc["gguf"]["quant"]), 4800.0, "9.0", measured=measured)
    gap = v.engine_gap
    assert gap is not None and gap.summary.startswith("exllamav2 is about as fast here (106.1 vs 96.25 tok/s, measured)")
    assert "EXL2 4.0 bpw" in gap.summary and "12.74 GB per token" in gap.summary
    assert round(gap.gap, 2) == 1.10  # x1.10: below the line that calls it a gap
    assert next(o for o in gap.others if o.engine == "transformers").basis == "estimated"
