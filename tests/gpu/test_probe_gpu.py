"""On a real GPU with exllamav2 installed: the probe end to end (run on the device; CI skips it)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest
from conftest import ROOT

pytestmark = [pytest.mark.gpu,  # find_spec, not an import: importing exllamav2 JIT-builds its extension (minutes)
              pytest.mark.skipif(importlib.util.find_spec("exllamav2") is None, reason="exllamav2 is not installed")]


def probe(*args: str, timeout: float = 420) -> dict:
    proc = subprocess.run([sys.executable, "-m", "doctor", "probe", "--json", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout)
    return json.loads(proc.stdout)


def test_synthetic_probe_measures_and_explains():
    report = probe("--synthetic", "--synthetic-gb", "2")
    p = report["probe"]
    assert p["status"] == "ok", p["summary"]
    result = p["result"]
    assert result["shape"]["format"] == "gptq" and result["passes"][0]["runs"]
    assert result["bandwidth"]["gbs"] > 100
    for run in result["passes"][0]["runs"]:  # host figures are always recorded beside the speed
        assert run["cpu_wall"] > 0 and run["minor_faults"] >= 0
    v = report["verdict"]
    assert v["measured_tok_s"] > 0 and v["causes"][-1]["id"] == "unexplained"
    assert abs(sum(c["share"] for c in v["causes"] if c["share"] is not None) - 1) < 0.02


def test_a_model_that_does_not_fit_is_a_memory_budget_failure(tmp_path):
    report = probe("--synthetic", "--synthetic-gb", "2", "--max-seq-len", "4000000", timeout=300)
    finding = next(f for f in report["findings"] if f["id"] == "memory-budget")
    assert finding["status"] == "fail" and report["probe"]["error_kind"] == "oom"


def test_a_directory_exllamav2_cannot_load(tmp_path):
    (tmp_path / "config.json").write_text('{"architectures": ["LlamaForCausalLM"]}')
    report = probe("--model", str(tmp_path), timeout=300)
    assert report["probe"]["error_kind"] == "model-load"
    assert next(f for f in report["findings"] if f["id"] == "model-load")["status"] == "fail"
