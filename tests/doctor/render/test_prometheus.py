"""--prometheus FILE: node_exporter's textfile format, parsed by prometheus_client's own parser, written atomically."""

from __future__ import annotations

import os

import pytest
from conftest import MACHINES, run_cli
from prometheus_client.parser import text_string_to_metric_families


def families(text: str) -> dict:
    return {f.name: f for f in text_string_to_metric_families(text)}


def test_one_gauge_per_status_per_gpu(tmp_path):
    prom = tmp_path / "v100-doctor.prom"
    proc = run_cli("--replay", str(MACHINES / "mixed-2080ti-v100.json"), "--prometheus", str(prom))
    assert proc.returncode == 2
    fams = families(prom.read_text())
    assert fams["v100_doctor_info"].samples[0].labels["version"]
    checks = fams["v100_doctor_check_status"]
    assert checks.type == "gauge"
    on = {(s.labels["gpu"], s.labels["check"]): s.labels["status"] for s in checks.samples if s.value == 1}
    assert on[("1", "cuda-pairing")] == "fail" and on[("0", "cuda-pairing")] == "pass"
    assert on[("", "gpu-numbering")] == "pass"
    assert fams["v100_doctor_exit_code"].samples[0].value == 2
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]  # the temporary file was renamed


def test_probed_speed_and_ceiling(tmp_path):
    from doctor.render.prometheus import render_prometheus
    from doctor.run.examples import replay_example

    report = replay_example("h200-synthetic-gptq")  # the recorded H200 probe, verdict computed now
    fams = families(render_prometheus(report, 0))
    assert fams["v100_doctor_decode_tokens_per_second"].samples[0].value == pytest.approx(report.verdict.measured_tok_s, rel=1e-5)
    assert fams["v100_doctor_decode_ceiling_tokens_per_second"].samples[0].value > 0
