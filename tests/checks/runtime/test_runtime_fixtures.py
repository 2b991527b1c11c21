"""Each recorded sample-series fixture, replayed: the expected runtime finding with its evidence.

Idle is never reported as throttling. The fixtures are whole reports, so they are also checked
against the report schema and for a note saying where their numbers come from.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ROOT

from checks.env.gpu_present import CHECK as GPU_PRESENT
from checks.manifest import RUNTIME_CHECKS
from doctor.facts.replay import load_document
from doctor.model.findings import Status
from doctor.model.source import replayed
from doctor.run.pipeline import diagnose

SAMPLES = ROOT / "fixtures" / "samples"


def replay(name: str):
    loaded = load_document(str(SAMPLES / f"{name}.json"))
    report = diagnose(loaded.plan, loaded.facts, source=replayed(f"{name}"), checks=[GPU_PRESENT, *RUNTIME_CHECKS])
    return {f.id: f for f in report.findings}, loaded


def test_healthy_decode_passes_everything_with_full_clocks():
    f, _ = replay("v100-decode-healthy")
    assert {k: v.status for k, v in f.items()} == {k: Status.PASS for k in f}
    t = f["thermal"].evidence
    assert t["mem_clock_ratio"] == 1.0 and t["sm_clock_ratio"] == 1.0 and t["throttle_fraction_of_busy_samples"] == {}
    assert f["cpu-offload"].evidence["pcie_rx_busy_median_mbs"] < 1.0


def test_thermal_slowdown_fails_with_reason_fractions_and_memory_clock():
    f, _ = replay("v100-thermal-slowdown")
    t = f["thermal"]
    assert t.status == Status.FAIL
    frac = t.evidence["throttle_fraction_of_busy_samples"]
    assert frac["sw_thermal_slowdown"] >= 0.4 and frac["hw_thermal_slowdown"] >= 0.1
    assert t.evidence["throttle_seconds_from_driver_counters"]["thermal"] > 10
    assert t.evidence["temperature_max_c"] == 87 and t.evidence["margin_c"] == 0
    assert t.evidence["mem_clock_ratio_min"] == round(810 / 877, 3) and t.evidence["mem_clock_dropped_fraction"] > 0.1
    assert "memory clock fell below max" in t.summary and any("-pl" in c for c in t.commands)


def test_power_capped_card_warns_and_keeps_the_memory_clock():
    f, _ = replay("v100-power-capped")
    t = f["thermal"]
    assert t.status == Status.WARN
    assert t.evidence["power_limit_w"] == 150.0 and t.evidence["power_default_limit_w"] == 250.0
    assert t.evidence["throttle_fraction_of_busy_samples"]["sw_power_cap"] > 0.8
    assert t.evidence["mem_clock_ratio"] == 1.0 and t.evidence["sm_clock_ratio"] < 0.85
    assert "sudo nvidia-smi -i 0 -pl 250" in t.commands


def test_offload_over_pcie_gen3_fails_from_pcie_and_config_evidence():
    f, loaded = replay("v100-offload-pcie-gen3")
    o = f["cpu-offload"]
    assert o.status == Status.FAIL and "weights are being streamed" in o.summary
    assert o.evidence["pcie_rx_busy_median_mbs"] > 10_000 and o.evidence["pcie_rx_streaming_fraction"] > 0.8
    assert o.evidence["link"] == "PCIe gen3 x16" and o.evidence["decode_cap_tok_s_per_offloaded_gb_est"] == 12.61
    assert any("llm_int8_enable_fp32_cpu_offload" in c for c in o.evidence["clues"])
    assert loaded.facts.launch_config.path == "serve.py"
    assert f["thermal"].status == Status.PASS  # low power and heat while it waits on PCIe: not throttling


def test_other_process_holding_6gb_is_named():
    f, _ = replay("v100-other-process-6gb")
    g = f["gpu-processes"]
    assert g.status == Status.WARN
    assert g.evidence["others"] == ["pid 5150 (python3, 6,144 MiB)"] and g.evidence["others_mib"] == 6144.0
    assert g.evidence["yours"] == ["pid 4242 (python3, 9,310 MiB)"] and g.evidence["memory_free_mib"] == 370.5


def test_idle_is_not_throttling_and_the_idle_link_is_not_a_fault():
    f, _ = replay("v100-idle")
    assert f["thermal"].status == Status.PASS and "idle clocks are not throttling" in f["thermal"].summary
    assert f["thermal"].evidence["reason_fraction_all_samples"] == {"gpu_idle": 1.0}
    assert f["pcie-link"].status == Status.PASS and f["pcie-link"].evidence["gen"] == 1
    assert f["gpu-processes"].status == Status.PASS


@pytest.mark.parametrize("path", sorted(SAMPLES.glob("*.json")), ids=lambda p: p.stem)
def test_every_fixture_is_a_valid_report_that_says_where_its_numbers_come_from(path: Path, validate):
    doc = json.loads(path.read_text())
    validate(doc)
    assert len(doc["note"]) > 80 and doc["facts"]["samples"]["gpus"][0]["samples"]
    assert doc["facts"]["samples"]["note"]


def test_h200_recorded_live_decode_has_real_readings_and_no_false_throttling():
    f, loaded = replay("h200-decode-watch")
    assert {k: v.status for k, v in f.items()} == {k: Status.PASS for k in f}
    t = f["thermal"].evidence
    assert t["sm_clock_median_mhz"] == 1980.0 and t["mem_clock_ratio"] == 1.0 and t["throttle_fraction_of_busy_samples"] == {}
    g = loaded.facts.samples.gpus[0]
    assert g.name == "NVIDIA H200" and g.pcie_gen_max == 5 and all(s.util_gpu_pct >= 90 for s in g.samples)
    assert 50 < f["cpu-offload"].evidence["pcie_rx_busy_median_mbs"] < 500  # real, small: commands, not weights
    assert f["gpu-processes"].evidence["yours"] == ["pid 425 (python3, 8,358 MiB)"]  # the loop, child of the watched pid
    assert loaded.facts.nvml.gpus[0].uuid == "GPU-00000000-0000-0000-0000-000000000000"
