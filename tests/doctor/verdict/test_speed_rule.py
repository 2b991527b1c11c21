"""One rule grades a measured decode speed (doctor/verdict/speed_rule.py): the same measurement gets the same status
whether it came from the main run or from `probe`, on a synthetic model or the user's, for ExLlamaV2 and for the
engines with their own probe. Before: `probe --synthetic` said "info" where the main run warned."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from conftest import MACHINES, ROOT

from doctor.facts.replay import load_document
from doctor.model.findings import Status
from doctor.model.plan import Plan
from doctor.model.probe_results import ProbeReport
from doctor.model.report import build_report
from doctor.model.serialize import from_jsonable
from doctor.run.engine_stage import with_engine_probe
from doctor.run.probe_stage import with_probe
from doctor.verdict.speed_rule import SHORTFALL, decode_speed_status

PROBES = ROOT / "fixtures" / "probes"
V100 = load_document(str(MACHINES / "v100-pcie-16gb-healthy.json")).facts
H200 = load_document(str(MACHINES / "h200-live.json")).facts


def exl2_probe(name: str) -> ProbeReport:
    return from_jsonable(ProbeReport, json.loads((PROBES / f"{name}.json").read_text())["probe"])


def engine_report(name: str):
    doc = json.loads((PROBES / "engines" / "reports" / f"{name}.json").read_text())
    return from_jsonable(ProbeReport, doc["probe"])


def speed(report) -> Status:
    return report.finding("decode-speed").status


@pytest.mark.parametrize("efficiency,expected,status", [
    (0.91, 0.90, Status.PASS), (0.90 * SHORTFALL, 0.90, Status.PASS), (0.90 * SHORTFALL - 0.001, 0.90, Status.WARN),
    (0.30, 0.31, Status.PASS), (0.20, 0.31, Status.WARN), (None, 0.31, Status.INFO), (0.5, None, Status.INFO)])
def test_the_rule_at_its_edges(efficiency, expected, status):
    assert decode_speed_status(efficiency, expected) is status


def test_an_unsettled_or_offloaded_speed_warns_whatever_its_share():
    assert decode_speed_status(0.99, 0.90, unsettled=True) is Status.WARN
    assert decode_speed_status(0.99, 0.90, offloaded=True) is Status.WARN
    assert decode_speed_status(None, None, unsettled=True) is Status.INFO  # nothing to grade against


@pytest.mark.parametrize("name", ["v100-healthy-near-ceiling", "v100-throttled", "v100-host-bound", "v100-offloaded",
                                  "v100-gptq-act-order", "v100-fp16-cache-long-context"])
def test_an_exllamav2_measurement_gets_one_status_in_the_main_run_and_in_probe(name):
    probe = exl2_probe(name)
    main_run = with_probe(build_report(V100, Plan(model_path="/m"), []), replace(probe, synthetic="", asked=False))
    probe_cmd = with_probe(build_report(V100, Plan(), []), replace(probe, synthetic="gptq", asked=True))
    assert speed(main_run) is speed(probe_cmd)
    assert speed(main_run) in (Status.PASS, Status.WARN)
    ev = main_run.finding("decode-speed").evidence
    assert ev["expected_efficiency"] == 0.90 and ev["warn_below_efficiency"] == round(0.90 * SHORTFALL, 3)
    assert (speed(main_run) is Status.WARN) == (ev["efficiency"] < ev["warn_below_efficiency"]
                                                or "cpu-offload" == ev["top_cause"] or bool(main_run.verdict.unsettled))


def test_the_healthy_v100_passes_and_the_throttled_one_warns():
    assert speed(with_probe(build_report(V100, Plan(model_path="/m"), []), exl2_probe("v100-healthy-near-ceiling"))) \
        is Status.PASS
    assert speed(with_probe(build_report(V100, Plan(model_path="/m"), []), exl2_probe("v100-throttled"))) is Status.WARN


@pytest.mark.parametrize("name", ["h200-llamacpp-synthetic-probe", "h200-llamacpp-q4km-probe",
                                  "h200-transformers-nf4-probe", "h200-transformers-nf4-spread-flagged"])
def test_an_engine_measurement_gets_one_status_synthetic_or_not(name):
    probe = engine_report(name)
    as_synthetic = with_engine_probe(build_report(H200, Plan(engine=probe.engine), []),
                                     replace(probe, synthetic="synthetic model", asked=True))
    as_model = with_engine_probe(build_report(H200, Plan(engine=probe.engine, model_path="/m"), []),
                                 replace(probe, synthetic="", asked=False))
    assert speed(as_synthetic) is speed(as_model) is not Status.INFO


def test_no_ceiling_is_info_for_every_engine_never_a_pass():
    """Before: an engine's speed with no datasheet row for the card passed, ExLlamaV2's was info."""
    no_card = build_report(replace(H200, nvml=replace(H200.nvml, gpus=())), Plan(engine="llama.cpp"), [])
    folded = with_engine_probe(no_card, engine_report("h200-llamacpp-q4km-probe"))
    assert speed(folded) is Status.INFO and "no ceiling" in folded.finding("decode-speed").summary
    probe = exl2_probe("v100-host-bound")
    unknown = replace(probe, result=replace(probe.result, device_name="Mystery Accelerator 9000", bandwidth=None))
    exl2 = with_probe(build_report(replace(V100, nvml=replace(V100.nvml, gpus=())), Plan(model_path="/m"), []), unknown)
    assert speed(exl2) is Status.INFO
