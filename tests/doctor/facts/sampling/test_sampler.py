"""The sampler: what it reads from NVML and psutil, its bounded rate, counters, failures, and round-trips."""

from __future__ import annotations

import json
import time
from types import SimpleNamespace

import fake_nvml
import pytest

from doctor.facts.nvml import gather_nvml
from doctor.facts.sampling.counters import CounterSnapshot, window_counters
from doctor.facts.sampling.host_reader import HostReader, owner_problem
from doctor.facts.sampling.sampler import MAX_HZ, Sampler
from doctor.model.facts import Facts, HostFacts, PythonFacts
from doctor.model.serialize import from_jsonable, to_jsonable
from doctor.model.units import MIB


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


class FakeProc:
    def __init__(self, pid, rss_mib=2048.0, shared_mib=100.0, uid=1000, alive=True):
        self.pid, self.rss, self.shared, self.uid, self.alive, self.cpu = pid, rss_mib, shared_mib, uid, alive, 0.0

    def name(self):
        return "python3"

    def username(self):
        return "someone"

    def uids(self):
        return SimpleNamespace(real=self.uid)

    def oneshot(self):
        import contextlib

        return contextlib.nullcontext()

    def memory_info(self):
        if not self.alive:
            raise FakePsutil.NoSuchProcess(self.pid)
        return SimpleNamespace(rss=int(self.rss * MIB), shared=int(self.shared * MIB))

    def cpu_times(self):
        self.cpu += 0.1
        return SimpleNamespace(user=self.cpu, system=0.0)

    def children(self, recursive=False):
        return [SimpleNamespace(pid=self.pid + 1)]


class FakePsutil:
    class NoSuchProcess(Exception):
        pass

    class AccessDenied(Exception):
        pass

    def __init__(self, procs):
        self.procs = procs

    def Process(self, pid):
        if pid not in self.procs:
            raise self.NoSuchProcess(pid)
        return self.procs[pid]

    def swap_memory(self):
        return SimpleNamespace(sin=0, sout=0)

    def virtual_memory(self):
        return SimpleNamespace(available=64 * 1024 * MIB)


def run_ticks(sampler: Sampler, clock: Clock, n: int, step: float = 0.2):
    sampler.start(background=False)
    for _ in range(n):
        clock.t += step
        sampler.tick()
    clock.t += step
    return sampler.stop()


def test_a_tick_reads_clocks_reasons_power_pcie_memory_and_processes():
    clock, ps = Clock(), FakePsutil({4242: FakeProc(4242)})
    series = run_ticks(Sampler([0], pids=[4242], nvml_module=fake_nvml.sampled_v100(), psutil_module=ps, clock=clock), clock, 3)
    g = series.gpu(0)
    assert g.name == "Tesla V100-PCIE-16GB" and g.sm_clock_max_mhz == 1380 and g.mem_clock_max_mhz == 877
    assert g.slowdown_temperature_c == 87 and g.power_limit_w == 250.0 and g.pcie_gen_max == 3
    s = g.samples[0]
    assert (s.sm_clock_mhz, s.mem_clock_mhz, s.temperature_c, s.power_w) == (1380, 877, 86, 231.5)
    assert s.reasons == ("sw_thermal_slowdown", "hw_thermal_slowdown")  # named flags, old "Throttle" binding name
    assert s.pcie_rx_mbs == 2048.0 and s.pcie_tx_mbs == 40.96  # KB/s x 1024 / 1e6
    assert g.pcie_source == "throughput (NVML ~20 ms window)" and "pcie_byte_counters" in g.unavailable
    assert s.memory_used_mib == 320.1 and s.util_gpu_pct == 97
    assert [(p.pid, p.used_mib) for p in s.processes] == [(4242, 12288.0), (777, None)]
    assert [x.t_s for x in g.samples] == [0.2, 0.4, 0.6]


def test_pcie_byte_counters_wrap_at_2_32_and_a_small_step_across_the_wrap_is_exact():
    clock = Clock()
    series = run_ticks(Sampler([0], nvml_module=fake_nvml.sampled_v100(byte_counters=True), clock=clock), clock, 3)
    g = series.gpu(0)
    assert g.pcie_source.startswith("byte counters")
    assert [x.pcie_rx_mbs for x in g.samples] == [2048.0, 0.25, 0.25]  # first tick: throughput; then 50 kB / 0.2 s
    assert series.gpu(0).counters.pcie_rx_bytes == 100_000 and series.gpu(0).counters.pcie_counted_s == 0.4


def test_pcie_counter_wrapping_several_times_per_tick_is_unwrapped_with_the_throughput_reading():
    """53 GB/s at 5 Hz moves 10.6 GB per tick: the 32-bit counter wraps twice, as seen on the H200."""
    clock, m = Clock(), fake_nvml.sampled_v100(byte_counters=True)
    m.state.update(rx_step=int(10.6e9), thr_rx_kbs=int(50e9 / 1024))  # the 20 ms window reads a little low
    g = run_ticks(Sampler([0], nvml_module=m, clock=clock), clock, 3).gpu(0)
    assert [x.pcie_rx_mbs for x in g.samples][1:] == [53000.0, 53000.0]
    assert g.counters.pcie_rx_bytes == 2 * int(10.6e9)


def test_counters_are_deltas_over_the_window_not_sampled_guesses():
    clock = Clock()
    series = run_ticks(Sampler([0], nvml_module=fake_nvml.sampled_v100(), clock=clock), clock, 2)
    c = series.gpu(0).counters
    # six policies each read twice; each read adds 0.25 s to the shared fake counter -> 6 reads apart = 1.5 s
    assert c.throttle_s["power"] == 1.5 and set(c.throttle_s) == {"power", "thermal", "sync_boost", "board_limit",
                                                                   "low_utilization", "reliability"}
    assert c.energy_j == 50.0 and c.pcie_rx_bytes is None  # no byte counters on this "V100"
    assert c.window_s == pytest.approx(0.6)


def test_a_refused_reading_is_asked_once_and_its_reason_kept():
    calls: dict = {}
    clock = Clock()
    series = run_ticks(Sampler([0], nvml_module=fake_nvml.sampled_v100(calls), clock=clock), clock, 5)
    g = series.gpu(0)
    assert calls["graphics"] == 1  # NotSupported on the first tick, never asked again
    assert "graphics_processes" in g.unavailable and "Not Supported" in g.unavailable["graphics_processes"]
    assert g.unavailable["memory_temperature_c"] == "memory temperature is not reported by this GPU"
    assert all(s.memory_temperature_c is None for s in g.samples)


def test_rate_is_clamped_and_the_thread_stops_promptly():
    sampler = Sampler([0], hz=1000, nvml_module=fake_nvml.sampled_v100())
    assert sampler.hz == MAX_HZ
    sampler.start()
    time.sleep(0.45)
    t0 = time.perf_counter()
    series = sampler.stop()
    assert time.perf_counter() - t0 < 0.5
    n = len(series.gpu(0).samples)
    assert 3 <= n <= 6, n  # 10 Hz for ~0.45 s, first tick at once
    assert series.sampler_cpu_s is not None and series.sampler_cpu_s >= 0
    assert sampler.stop() is series  # idempotent


def test_no_nvml_is_a_reason_not_a_crash():
    clock = Clock()
    series = run_ticks(Sampler([0], nvml_module=fake_nvml.library_missing(), clock=clock), clock, 2)
    assert series.gpus == () and "NVML Shared Library Not Found" in series.nvml_reason


def test_a_gpu_that_falls_off_the_bus_keeps_sampling_host_side():
    clock, ps = Clock(), FakePsutil({4242: FakeProc(4242)})
    series = run_ticks(Sampler([0], pids=[4242], nvml_module=fake_nvml.raising_everywhere(), psutil_module=ps,
                               clock=clock), clock, 2)
    assert series.gpu(0).unavailable["device"].endswith("GPU is lost")
    assert len(series.processes[0].samples) == 2


def test_host_side_rss_cpu_and_exit_of_the_watched_process():
    clock, proc = Clock(), FakeProc(4242, rss_mib=5000.0, shared_mib=300.0)
    sampler = Sampler([0], pids=[4242], nvml_module=fake_nvml.sampled_v100(), psutil_module=FakePsutil({4242: proc}), clock=clock)
    sampler.start(background=False)
    clock.t += 0.2
    sampler.tick()
    clock.t += 0.2
    sampler.tick()
    assert not sampler.watched_all_exited()
    proc.alive = False
    clock.t += 0.2
    sampler.tick()
    assert sampler.watched_all_exited()
    series = sampler.stop()
    p = series.processes[0]
    assert p.name == "python3" and p.exited_at_s == pytest.approx(0.6)
    assert [s.rss_mib for s in p.samples] == [5000.0, 5000.0] and p.samples[0].shared_mib == 300.0
    assert p.samples[0].cpu_pct is None and p.samples[1].cpu_pct == pytest.approx(50.0)  # 0.1 s CPU per 0.2 s
    assert series.watched_pids == (4242, 4243)  # children count as the watched server


def test_series_round_trips_through_the_report_serializer():
    clock, ps = Clock(), FakePsutil({4242: FakeProc(4242)})
    series = run_ticks(Sampler([0], pids=[4242], nvml_module=fake_nvml.sampled_v100(), psutil_module=ps, clock=clock), clock, 3)
    facts = Facts(gathered_at="x", nvml=gather_nvml(fake_nvml.v100()), python=PythonFacts(version="3", executable="p"),
                  host=HostFacts(), samples=series)
    back = from_jsonable(Facts, json.loads(json.dumps(to_jsonable(facts))))
    assert back.samples == series


def test_counter_that_went_backwards_is_unavailable_not_negative():
    start = CounterSnapshot(0.0, {"throttle_power": 5_000_000_000, "energy": 10})
    end = CounterSnapshot(2.0, {"throttle_power": 1_000, "energy": 2010})
    c = window_counters(start, end)
    assert "throttle_power" in c.unavailable and c.throttle_s == {} and c.energy_j == 2.0


@pytest.mark.parametrize("procs, uid, expect", [
    ({}, 1000, "no process with pid 4242"),
    ({4242: FakeProc(4242, uid=1001)}, 1000, "belongs to someone, not to you"),
    ({4242: FakeProc(4242, uid=1000)}, 1000, None),
    ({4242: FakeProc(4242, uid=1001)}, 0, None),  # root may watch anyone's
])
def test_owner_problem_names_missing_and_foreign_pids(monkeypatch, procs, uid, expect):
    monkeypatch.setattr("os.getuid", lambda: uid)
    problem = owner_problem(4242, FakePsutil(procs))
    assert (problem is None) if expect is None else (expect in problem)


def test_host_reader_records_why_a_pid_cannot_be_read():
    reader = HostReader((31337,), FakePsutil({}))
    reader.sample(0.0)
    assert reader.watched[0].series().unavailable == "NoSuchProcess: cannot read pid 31337"


def test_nvml_sentinels_in_samples_become_none_with_the_reason_kept():
    """NVML_VALUE_NOT_AVAILABLE (all ones) and NaN in a tick are not readings: None, and why, in `unavailable`."""
    clock, m = Clock(), fake_nvml.sampled_v100()
    m.nvmlDeviceGetClockInfo = lambda h, t: (1 << 32) - 1
    m.nvmlDeviceGetPowerUsage = lambda h: float("nan")
    m.nvmlDeviceGetMaxPcieLinkWidth = lambda h: (1 << 32) - 1
    m.nvmlDeviceGetComputeRunningProcesses = lambda h: [SimpleNamespace(pid=4242, usedGpuMemory=(1 << 64) - 1)]
    g = run_ticks(Sampler([0], nvml_module=m, clock=clock), clock, 2).gpu(0)
    assert all(s.sm_clock_mhz is None and s.power_w is None for s in g.samples)
    assert g.samples[0].processes[0].used_mib is None and g.pcie_width_max is None
    assert g.samples[0].temperature_c == 86 and g.sm_clock_max_mhz == 1380  # the rest is read as before
    for key, why in (("sm_clock_mhz", "outside"), ("power_draw_w", "not a finite number"), ("used_mib", "outside"),
                     ("pcie_width_max", "outside")):
        assert g.unavailable[key].startswith(f"recorded by NVML: {key} ") and why in g.unavailable[key]
