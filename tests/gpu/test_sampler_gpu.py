"""On a real GPU: the sampler against a live decode loop in a child process, and at rest."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from conftest import ROOT

from doctor.facts.sampling.sampler import Sampler
from doctor.model.sample_summary import THROTTLE_REASONS, summarize_gpu

pytestmark = pytest.mark.gpu


@pytest.fixture
def decode_child(tmp_path):
    ready = tmp_path / "ready"
    p = subprocess.Popen([sys.executable, str(ROOT / "benchmarks" / "decode_loop.py"), "--weights-gb", "2",
                          "--seconds", "20", "--ready-file", str(ready)], stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert p.poll() is None and time.monotonic() < deadline, "the decode loop did not start"
        time.sleep(0.1)
    yield p
    p.kill()  # this test's own child, by its id
    p.wait()


def test_sampler_sees_a_live_decode_loop(decode_child):
    series = Sampler([0], pids=[decode_child.pid], hz=10).start()
    time.sleep(2.0)
    series = series.stop()
    g = series.gpu(0)
    s = summarize_gpu(g)
    assert s.samples >= 15 and s.busy_samples >= 10, (s.samples, s.busy_samples)
    assert g.sm_clock_max_mhz and 0 < s.sm_clock_median_mhz <= g.sm_clock_max_mhz
    assert s.mem_clock_ratio and s.mem_clock_ratio > 0.5
    assert s.util_busy_mean_pct and s.util_busy_mean_pct > 0
    assert s.power_mean_w and s.power_mean_w > 0
    assert s.pcie_rx_busy_median_mbs is not None and s.pcie_source
    pids = {p.pid for x in g.samples for p in (x.processes or ())}
    assert decode_child.pid in pids, f"the decode loop's pid is not in NVML's list {pids}"
    assert g.counters is not None and all(v >= 0 for v in g.counters.throttle_s.values())
    proc = series.processes[0]
    assert proc.pid == decode_child.pid and proc.samples and proc.samples[-1].rss_mib > 100
    assert series.sampler_cpu_s is not None and series.sampler_cpu_s / series.duration_s < 0.05
    # a healthy card under this light load: no throttle reason in most busy samples
    assert sum(s.throttle_fraction_busy.get(r, 0) for r in THROTTLE_REASONS if r != "sw_power_cap") < 0.2


def test_sampler_at_rest_reports_idle_not_throttling():
    series = Sampler([0], hz=10).start()
    time.sleep(1.0)
    g = series.stop().gpu(0)
    s = summarize_gpu(g)
    assert s.samples >= 8 and g.unavailable.get("device") is None
    idle = [x for x in g.samples if x.reasons and "gpu_idle" in x.reasons]
    assert all(not set(x.reasons) & set(THROTTLE_REASONS) for x in idle)
