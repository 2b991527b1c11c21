"""The route's own consistency rules, run over EVERY machine fixture, and the defect classes of issue 11."""

from __future__ import annotations

import shlex
import subprocess
from functools import lru_cache

import pytest
from conftest import MACHINES

from checks.prescription.problems import TORCH_KINDS, last_branch
from checks.prescription.quote import route_lines
from doctor.facts.replay import load_document
from doctor.model.findings import Status
from doctor.model.report import report_to_dict
from doctor.model.source import replayed
from doctor.run.pipeline import diagnose

ALL = sorted(p.stem for p in MACHINES.glob("*.json"))
HEALTHY = ("v100-pcie-16gb-healthy", "h200-live", "t4-torch-2.11-cu130-healthy", "v100-r580-torch-2.11-cu126-healthy",
           "p100-12gb-torch-2.6-cu126")


@lru_cache(maxsize=None)
def replay(name: str):
    doc = load_document(str(MACHINES / f"{name}.json"))
    return diagnose(doc.plan, doc.facts, source=replayed(f"{name}.json"))


@pytest.mark.parametrize("name", ALL)
def test_every_route_keeps_its_rules(name):
    report = replay(name)
    rx = report.prescription
    if rx is None:
        return
    kinds = {p.kind for p in rx.problems}
    cc = report.facts.gpu(0).compute_capability if report.facts.gpu(0) else None
    assert len(rx.routes) <= 2
    for route in rx.routes:
        assert route.steps, route.name
        majors = {s.cuda_major for s in route.steps if s.kind in ("torch", "toolkit")}
        assert len(majors) <= 1, (route.name, majors)  # one CUDA major across torch and toolkit
        if any(s.kind == "torch" for s in route.steps):  # a torch step only when torch is the problem
            assert kinds & (TORCH_KINDS | {"driver_too_old_for_torch"}), (route.name, kinds)
        elif majors and report.facts.python.torch.cuda:  # torch kept: the toolkit lands on torch's CUDA major
            assert majors == {int(str(report.facts.python.torch.cuda).split(".")[0])}
        for s in route.steps:
            if s.kind == "driver":
                last = last_branch(cc) if isinstance(cc, str) else 580
                assert last is None or s.driver_branch <= last, (s.driver_branch, last)
            assert s.command or s.action
            if s.command:
                shlex.split(s.command)  # raises on unbalanced quotes


def test_every_route_command_is_valid_bash():
    script = "\n".join(line for name in ALL if (rx := replay(name).prescription) for r in rx.routes for line in route_lines(r))
    assert script
    proc = subprocess.run(["bash", "-n"], input=script, text=True, capture_output=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("name", ALL)
def test_checks_quote_the_route_and_invent_no_commands(name):
    report = replay(name)
    rx = report.prescription
    lines = {line for r in (rx.routes if rx else ()) for line in route_lines(r)}
    for f in report.findings:
        if f.id in ("cuda-pairing", "exllamav2-ready") and f.status in (Status.FAIL, Status.WARN) and rx and rx.routes:
            assert set(f.commands) <= lines, (f.id, f.commands)
    assert report_to_dict(report)["prescription"] is None or isinstance(report_to_dict(report)["prescription"], dict)


@pytest.mark.parametrize("name", HEALTHY)
def test_healthy_fixtures_have_no_warning_and_no_route(name):
    report = replay(name)
    bad = [(f.id, f.summary) for f in report.findings if f.status in (Status.WARN, Status.FAIL, Status.ERROR)]
    assert not bad
    assert report.prescription is None or not report.prescription.routes


def _route(name):
    return replay(name).prescription.routes


def test_driver_or_torch_two_named_routes_that_agree_within_each():  # defect 1 and 4
    a, b = _route("v100-r470-torch-2.5.1-cu124")
    assert a.name == "change the CUDA variant of torch" and b.name == "upgrade the driver"
    assert 'pip install "torch==2.5.1" --index-url https://download.pytorch.org/whl/cu118' in route_lines(a)
    assert any("cuda-11" in line for line in route_lines(a))  # toolkit follows torch to CUDA 11
    drv = next(s for s in b.steps if s.kind == "driver")
    assert drv.driver_branch == 580 and "R525" in drv.action and not any(s.kind == "torch" for s in b.steps)
    report = replay("v100-r470-torch-2.5.1-cu124")
    pairing, ready = report.finding("cuda-pairing"), report.finding("exllamav2-ready")
    assert pairing.commands == ready.commands and pairing.status is ready.status is Status.FAIL


def test_only_the_toolkit_changes_when_only_nvcc_is_wrong():  # defect 2
    for name in ("v100-torch-2.10-cu126-nvcc-13", "v100-nvcc-11.8-torch-cu121"):
        (route,) = _route(name)
        assert [s.kind for s in route.steps] == ["toolkit"] and route.steps[0].cuda_major == 12
        assert replay(name).finding("cuda-pairing").status is Status.WARN


@pytest.mark.parametrize("name, pin", [("titan-v-torch-2.11-cu128", '"torch==2.11.0" --index-url https://download.pytorch.org/whl/cu126'),
                                       ("p100-torch-2.8-cu128", '"torch==2.8.0" --index-url https://download.pytorch.org/whl/cu126')])
def test_same_release_other_cuda_variant_first(name, pin):  # defect 3
    (route,) = _route(name)
    assert route.steps[0].command == f"pip install {pin}"


def test_companions_are_pinned_or_named():  # defect 3
    (route,) = _route("v100-torch-2.7.1-cu128-companions")
    assert route.steps[0].command == ('pip install "torch==2.7.1" "torchvision==0.22.*" "torchaudio==2.7.*" '
                                      "--index-url https://download.pytorch.org/whl/cu126")
    assert any(s.kind == "companion" and "xformers 0.0.31" in s.action for s in route.steps)


@pytest.mark.parametrize("name", ["titan-v-torch-2.11-cu128", "p100-torch-2.8-cu128", "v100-torch-2.11-cu130"])
def test_exllamav2_ready_never_passes_without_a_kernel(name):  # defect 7
    f = replay(name).finding("exllamav2-ready")
    assert f.status is Status.FAIL and "no kernel" in f.summary and f.evidence["probe_can_run"] is False


def test_driver_590_names_the_card_from_its_pci_id():  # defect 9
    f = replay("v100-sxm2-driver-590").finding("gpu-present")
    assert "Tesla V100 SXM2 16 GB" in f.summary and "R580" in " ".join(f.commands)


def test_p100_12gb_has_its_own_bandwidth():  # defect 9
    assert replay("p100-12gb-torch-2.6-cu126").finding("compute-capability").evidence["bandwidth_gbs"] == 549
    assert replay("p100-torch-2.8-cu128").finding("compute-capability").evidence["bandwidth_gbs"] == 732


@pytest.mark.parametrize("name, cause, not_in", [("v100-sxm2-hw-power-brake", "power supply", "passive PCIe"),
                                                 ("v100-pcie-hw-thermal-slowdown", "too hot", "BMC")])
def test_throttle_reason_has_its_own_cause_and_fix(name, cause, not_in):  # defect 5
    f = replay(name).finding("thermal")
    assert f.status is Status.FAIL and cause in f.summary and not_in not in f.fix
    assert any("-pl" in c for c in f.commands) == (name == "v100-pcie-hw-thermal-slowdown")


def test_a_report_saved_before_the_route_existed_still_replays(tmp_path, validate):
    """The route is additive (schema v100-doctor/report/1): an older report without it loads and replays."""
    import json

    from doctor.model.report import parse_document

    doc = report_to_dict(replay("v100-torch-2.11-cu130"))
    assert validate(json.loads(json.dumps(doc)))["prescription"]["routes"]
    del doc["prescription"]
    loaded = parse_document(json.loads(json.dumps(doc)), "old.json")
    assert loaded.report is not None and loaded.report.prescription is None
    again = diagnose(loaded.plan, loaded.facts, source=replayed("old.json"))
    assert again.prescription.routes[0].name == "change the CUDA variant of torch"


def test_flash_attn_that_cannot_run_is_removed_with_the_flash_attn_checks_own_command():
    from dataclasses import replace

    from checks.base import CheckContext
    from checks.env.flash_attn import CHECK as FLASH
    from checks.prescription.route import prescribe
    from doctor.model.plan import Plan

    facts = load_document(str(MACHINES / "v100-torch-2.7.1-cu128-companions.json")).facts
    facts = replace(facts, python=replace(facts.python, packages={**facts.python.packages, "flash-attn": "2.6.3"}))
    (route,) = prescribe(facts, "7.0", "Tesla V100-PCIE-16GB").routes
    step = next(s for s in route.steps if "flash-attn" in s.changes)
    assert step.command in FLASH.run(CheckContext(facts=facts, plan=Plan())).commands


def test_text_and_markdown_print_the_route_once_at_the_end():
    from doctor.render.markdown import render_markdown
    from doctor.render.text import render_text

    report = replay("v100-r470-torch-2.5.1-cu124")
    pip = 'pip install "torch==2.5.1" --index-url https://download.pytorch.org/whl/cu118'
    text, md = render_text(report), render_markdown(report)
    assert text.count(pip) == 1 and text.index("Do this, in this order:") > text.index("exllamav2-ready")
    assert md.count(pip) == 1
    block = md[md.index("#### Do this, in this order"):]
    assert block.split("\n")[2] == "```sh" and pip in block and "# Or route B: upgrade the driver" in block


def test_flash_attn_fix_names_the_cards_own_sm():  # defect 8
    f = replay("rtx-2080-ti-flash-attn-2").finding("flash-attn")
    assert "sm_75" in f.fix and "sm_70" not in f.fix + f.summary


def test_each_active_throttle_reason_carries_its_own_cause():  # defect 5
    ev = replay("v100-sxm2-hw-power-brake").finding("thermal").evidence
    assert set(ev["reason_causes"]) == {"hw_slowdown", "hw_power_brake_slowdown"}
    assert "power supply" in ev["reason_causes"]["hw_power_brake_slowdown"]
