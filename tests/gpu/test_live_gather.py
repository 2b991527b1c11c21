"""On a real GPU (the H200 through the device tool): the live gatherer and the core checks end to end."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import ROOT

pytestmark = pytest.mark.gpu


def test_live_report_on_this_gpu():
    proc = subprocess.run([sys.executable, "-m", "doctor", "--json", "--fresh", "--no-probe"], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)
    report = json.loads(proc.stdout)
    findings = {f["id"]: f for f in report["findings"]}
    assert findings["gpu-present"]["status"] == "pass"
    gpu = report["facts"]["nvml"]["gpus"][0]
    cc = gpu["compute_capability"]
    assert findings["compute-capability"]["evidence"]["sm"] == "sm_" + cc.replace(".", "")
    torch = report["facts"]["python"]["torch"]
    assert torch["cuda_available"] is True and torch["device_capabilities"] == [cc]
    assert findings["cuda-pairing"]["status"] in ("pass", "warn"), findings["cuda-pairing"]["summary"]
    for key in ("sm_clock_max_mhz", "mem_clock_max_mhz", "pcie_gen_max", "power_limit_w", "temperature_c"):
        assert isinstance(gpu[key], (int, float)), key
