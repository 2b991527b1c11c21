"""A replayed report whose numbers became unknown (NaN, 1e400, "banana" -> Unknown) reads as whole sentences: no
clause is left dangling ("No other process on GPU 0 (no process holds this GPU);")."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from conftest import MACHINES
from robust_support import _env

FIXTURE = MACHINES / "v100-torch-2.11-cu130.json"
NUMBERS = ["memory_free_mib", "memory_total_mib", "memory_used_mib", "temperature_c", "sm_clock_mhz", "power_draw_w",
           "utilization_gpu_pct", "pcie_gen", "pcie_width", "ecc_uncorrected_volatile", "retired_pages_count",
           "slowdown_temperature_c", "mem_clock_max_mhz", "power_limit_w", "sm_clock_max_mhz", "mem_clock_mhz"]
DANGLING = re.compile(r"[;,]\s*$|[;,]\s*[)\]]|:\s*[;,]|;\s*;|\bnan\b|\bNone\b")


@pytest.mark.parametrize("unknown", [["memory_free_mib"], ["memory_total_mib"], NUMBERS])
def test_unknown_numbers_leave_no_dangling_clause(tmp_path, unknown):
    doc = json.loads(FIXTURE.read_text())
    for key in unknown:
        doc["facts"]["nvml"]["gpus"][0][key] = int("9" * 400)  # no card has it: unknown on load
    report = tmp_path / "r.json"
    report.write_text(json.dumps(doc))
    r = subprocess.run([sys.executable, "-m", "doctor", "--replay", str(report), "--json"], capture_output=True,
                       env=_env(tmp_path), cwd=tmp_path, timeout=60)
    assert r.returncode in (1, 2), r.stderr
    summaries = [f["summary"] for f in json.loads(r.stdout)["findings"]]
    assert any("gpu-processes" == f["id"] for f in json.loads(r.stdout)["findings"])
    assert not [s for s in summaries if DANGLING.search(s)], summaries
