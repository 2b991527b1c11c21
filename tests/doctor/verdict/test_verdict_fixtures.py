"""The attribution on probe fixtures: each case names its pitfall as the top cause, with its share.

The V100 fixtures are constructed (fixtures/probes/make_probe_fixtures.py says from what); the
shares follow from their readings by the arithmetic in doctor/verdict/causes.py, worked out in
each test's comment, so a change to that arithmetic shows up here.
"""

from __future__ import annotations

import json

import pytest
from conftest import ROOT

from doctor.model.probe_results import ProbeReport
from doctor.model.serialize import from_jsonable
from doctor.verdict.build import build_verdict

PROBES = ROOT / "fixtures" / "probes"


def verdict(name: str):
    doc = json.loads((PROBES / f"{name}.json").read_text())
    return build_verdict(from_jsonable(ProbeReport, doc["probe"]))


def test_healthy_v100_is_near_the_ceiling():
    v = verdict("v100-healthy-near-ceiling")
    # 12.7 GB + Q8 KV at 191 tokens (0.13 GB) = 12.83 GB; 900 GB/s / 12.83 GB = 70.2 tok/s; 64.05 / 70.2 = 0.91
    assert v.ceiling_tok_s == pytest.approx(70.2, abs=0.1)
    assert v.efficiency == pytest.approx(0.912, abs=0.002)
    assert v.near_ceiling
    assert "at the card's limit" in v.headline and "options" in v.headline
    assert v.datasheet.tok_s_weights_only == pytest.approx(70.9, abs=0.05)  # the reference story's figure
    assert v.reference.startswith("64.0 tok/s is at or above the reference V100")
    assert v.fixes == () and v.options[0].cause == "bpw"  # at the limit: levers are options, not a fix
    assert "trades a little quality" in v.options[0].action
    assert {o.cause for o in v.options} >= {"batching", "speculative-decoding"} and v.missing_evidence == ()


def test_throttled_v100():
    v = verdict("v100-throttled")
    # SM at 945/1380 = 0.685 under sw_thermal_slowdown: (14.11 + 0.14 ms) x (1/0.685 - 1) = 6.55 ms of a 8.11 ms gap
    top = v.top_cause
    assert top.id == "throttled-clocks"
    assert top.share == pytest.approx(0.81, abs=0.02)
    assert top.evidence["reasons"] == ["sw_thermal_slowdown"] and top.evidence["temperature_max_c"] == 89
    assert v.fixes[0].cause == "throttled-clocks" and v.fixes[0].expected_gain_tok_s > 15
    assert v.headline.startswith("81% of the gap to the ceiling is clocks held below max") and "70.2 tok/s ceiling" in v.headline


def test_offloaded_v100():
    v = verdict("v100-offloaded")
    # RX 6 GB/s x 83.3 ms = 0.50 GB per token; at gen3 x16's usable 12.6 GB/s that is 39.7 ms of a 69.2 ms gap
    top = v.top_cause
    assert top.id == "cpu-offload"
    assert top.share == pytest.approx(0.57, abs=0.02)
    assert top.evidence["crossing_gb_per_token"] == pytest.approx(0.5, abs=0.01)
    # the GPU's idle time is mostly the PCIe wait, so host-bound gets only the rest
    host = next(c for c in v.causes if c.id == "host-bound")
    assert host.share < 0.1


def test_host_bound_v100():
    v = verdict("v100-host-bound")
    # GPU busy 50% of 33.3 ms: 16.7 ms idle of a 19.2 ms gap
    top = v.top_cause
    assert top.id == "host-bound"
    assert top.share == pytest.approx(0.87, abs=0.02)
    assert top.evidence["gpu_util_pct"] == 50.0 and top.evidence["cpu_wall"] == 1.0


def test_gptq_act_order_is_blamed_only_for_its_measured_cost():
    v = verdict("v100-gptq-act-order")
    # 14.6 GB at 900 GB/s = 16.2 ms ideal; act-order's measured x1.05 adds 0.82 ms of a 3.0 ms gap
    top = v.top_cause
    assert top.id == "kernel-path"
    assert top.share == pytest.approx(0.27, abs=0.02)
    assert top.evidence["decode_time_factor"] == 1.05 and top.evidence["confidence"] == "P"
    assert "act_order" in top.evidence["source"]
    # GPU busy 97%, memory 95%: 2% of 19.2 ms is launch-bound (0.38 ms); the rest the verdict does not know
    assert next(c for c in v.causes if c.id == "launch-bound").share == pytest.approx(0.13, abs=0.02)
    assert v.unexplained == pytest.approx(0.55, abs=0.03)


def test_fp16_cache_at_long_context():
    v = verdict("v100-fp16-cache-long-context")
    # FP16 KV: 4 x 1024 x 64 x 16,063 tokens = 4.21 GB per token = 4.68 ms of a 6.72 ms gap to 70.9 tok/s
    top = v.top_cause
    assert top.id == "kv-reads"
    assert top.share == pytest.approx(0.70, abs=0.02)
    assert top.evidence["kv_read_gb_per_token"] == pytest.approx(4.21, abs=0.01)
    assert v.bytes.context == 16063
    assert "53.2 rather than 70.9" in v.reference
    levers = v.fixes or v.options  # near its (long-context) ceiling the same lever is an option
    assert levers[0].cause == "kv-reads" and "keep the FP16 cache" in levers[0].action


@pytest.mark.parametrize("name", sorted(p.stem for p in PROBES.glob("*.json")))
def test_every_fixture_accounts_for_the_whole_gap(name):
    v = verdict(name)
    shares = [c.share for c in v.causes if c.share is not None]
    assert sum(shares) == pytest.approx(1.0, abs=0.01) or v.lost_ms_per_token == 0
    assert v.causes[-1].id == "unexplained"


def test_mostly_unexplained_gap_names_missing_evidence_and_its_command():
    """The reference story's 40 tok/s stage: 98% of its gap unexplained, so the verdict says what to record, and how."""
    import shlex

    doc = json.loads((ROOT / "doctor" / "examples" / "seed-3-q8-cache-8192.json").read_text())
    v = build_verdict(from_jsonable(ProbeReport, doc["probe"]))
    assert not v.near_ceiling and v.unexplained > 0.5 and v.options == ()
    assert v.missing_evidence and "GPU samples during decode" in v.missing_evidence[0].what
    cmd = shlex.split(v.missing_evidence[0].command)
    assert cmd[:2] == ["v100-doctor", "probe"] and "--no-sampling" not in cmd and "--cache-mode" in cmd
    assert "missing: GPU samples during decode" in v.headline


def test_a_recorded_pace_shift_is_in_the_headline():
    """The H200's 64-layer EXL2 probe (issue 17): settled at 104.5 tok/s only after six runs at 58-81."""
    doc = json.loads((ROOT / "benchmarks" / "results" / "issue17-h200" / "probe_exl2_27_h200_2.json").read_text())
    v = build_verdict(from_jsonable(ProbeReport, doc["probe"]))
    assert v.measured_tok_s == pytest.approx(104.45, abs=0.01) and v.shifted
    assert v.headline.endswith(v.shifted) and "runs 7-9 of 9" in v.headline and "58.3-80.7 tok/s" in v.headline
