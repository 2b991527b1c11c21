"""The probe as a stage after the checks: when it is skipped and why, and how its outcome joins the report."""

from __future__ import annotations

import json
from dataclasses import replace

from conftest import MACHINES, ROOT, run_cli
from model_support import MODELS

from doctor.facts.replay import load_document
from doctor.model.findings import Finding, Status
from doctor.model.plan import Plan
from doctor.model.probe_results import ProbeReport
from doctor.model.report import build_report, parse_document, report_to_dict, report_to_json
from doctor.model.serialize import from_jsonable
from doctor.run.probe_stage import after_checks, skip_reason, with_probe

PROBES = ROOT / "fixtures" / "probes"
V100 = load_document(str(MACHINES / "v100-pcie-16gb-healthy.json")).facts


def report(findings=(), **plan):
    return build_report(V100, Plan(**plan), list(findings))


def finding(check_id, status, **evidence):
    return Finding(id=check_id, title=check_id, status=status, summary=f"{check_id} {status.value}", evidence=evidence)


def test_skip_reasons():
    assert "no model was given" in skip_reason(report())
    assert skip_reason(report(), synthetic=True) is None
    assert "no usable GPU" in skip_reason(report([finding("gpu-present", Status.FAIL)], model_path="/m"))
    assert "cuda-pairing" in skip_reason(report([finding("cuda-pairing", Status.FAIL)], model_path="/m"))
    assert "ExLlamaV2 is not ready" in skip_reason(report([finding("exllamav2-ready", Status.INFO, probe_can_run=False)],
                                                          model_path="/m"))
    assert "not this one" in skip_reason(report(model_path="/m", target_gpu="v100-pcie-16gb"))


def test_a_model_planned_from_the_hubs_headers_is_not_probed():
    from doctor.model.model_dir import ModelFacts

    hub = replace(report(model_path="org/name@main"), facts=replace(V100, model=ModelFacts("org/name@main", True, "hub-headers")))
    assert "weights are not here (hf download org/name --revision main, then" in skip_reason(hub)
    plain = replace(hub, facts=replace(V100, model=ModelFacts("org/name", True, "hub-headers")))
    assert "(hf download org/name, then" in skip_reason(plain)  # no revision asked: none in the command


def test_a_skipped_probe_is_a_finding_a_skip_after_checks_a_failure_when_asked():
    base = report([finding("gpu-present", Status.FAIL)], model_path="/m")
    after = after_checks(base)
    assert after.findings[-1].id == "probe" and after.findings[-1].status is Status.SKIP
    assert after_checks(base, asked=True).findings[-1].status is Status.FAIL


def test_a_finished_probe_brings_its_verdict_and_a_decode_speed_finding_and_replays():
    probe = from_jsonable(ProbeReport, json.loads((PROBES / "v100-throttled.json").read_text())["probe"])
    folded = with_probe(report(model_path="/m"), probe)
    assert folded.verdict.top_cause.id == "throttled-clocks"
    speed = folded.finding("decode-speed")
    assert speed.status is Status.WARN and speed.evidence["top_cause"] == "throttled-clocks"
    again = parse_document(json.loads(report_to_json(folded)), "r.json").report
    assert again.probe == folded.probe and again.verdict == folded.verdict


def test_a_failed_probe_replaces_the_prediction_of_its_check():
    predicted = finding("memory-budget", Status.PASS)
    failed = ProbeReport(status="failed", summary="out of GPU memory", error_kind="oom", error_phase="load")
    folded = with_probe(report([predicted], model_path="/m", max_seq_len=32768), failed)
    mb = folded.finding("memory-budget")
    assert mb.status is Status.FAIL and mb.evidence["predicted_before_probe"].startswith("pass")
    assert folded.verdict is None and folded.probe.status == "failed"


def test_the_default_run_says_why_the_probe_did_not_run():
    model = MODELS / "tiny-exl2"  # a model: a directory that names none stops at once (tests/doctor/cli/test_not_a_model.py)
    proc = run_cli("--model", str(model), "--json", "--no-tui")
    doc = json.loads(proc.stdout)
    probe = next(f for f in doc["findings"] if f["id"] == "probe")
    assert probe["status"] == "skip" and probe["summary"].startswith("not run: ")
    assert run_cli("--model", str(model), "--json", "--no-tui", "--no-probe").stdout.count('"id": "probe"') == 0


def test_the_probe_command_without_a_gpu_fails_clearly():
    proc = run_cli("probe", "--synthetic", "--json")
    doc = json.loads(proc.stdout)
    probe = next(f for f in doc["findings"] if f["id"] == "probe")
    if doc["facts"]["nvml"]["available"]:  # a machine with a GPU runs it instead (tests/gpu covers that)
        return
    assert proc.returncode == 2 and probe["status"] == "fail" and "no usable GPU" in probe["summary"]
    assert run_cli("probe").returncode == 3  # neither --model nor --synthetic


def test_schema_accepts_a_probe_and_a_verdict(validate):
    probe = from_jsonable(ProbeReport, json.loads((PROBES / "v100-offloaded.json").read_text())["probe"])
    validate(report_to_dict(with_probe(report(model_path="/m"), probe)))
    validate(report_to_dict(replace(report(), probe=ProbeReport(status="timeout", summary="load took too long"))))


def test_an_unknown_card_without_a_bandwidth_measurement_has_no_ceiling_but_keeps_its_speed():
    doc = json.loads((PROBES / "v100-host-bound.json").read_text())["probe"]
    probe = from_jsonable(ProbeReport, doc)
    unknown_card = replace(probe, result=replace(probe.result, device_name="Mystery Accelerator 9000", bandwidth=None))
    no_spec = build_report(replace(V100, nvml=replace(V100.nvml, gpus=())), Plan(model_path="/m"), [])
    folded = with_probe(no_spec, unknown_card)
    speed = folded.finding("decode-speed")
    assert folded.verdict is None and speed.status is Status.INFO
    assert "30.0 tok/s measured; no ceiling" in speed.summary and not folded.errors
