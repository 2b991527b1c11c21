"""The sampler's NVML child seen from the parent (doctor/facts/sampling/child_gpus.py): each answer awaited with
a deadline, so a child that hangs or dies at the Kth sample ends the readings with the reason and the samples so
far, and an interrupt's `hurry` is not held up by a hung call. A stand-in child speaks the protocol here; the real
one over a fake libnvidia-ml.so.1 is driven in tests/robustness/test_watch_nvml_faults.py."""

from __future__ import annotations

import json
import sys
import threading
import time

import pytest

from doctor.facts.sampling import child_gpus
from doctor.facts.sampling.child_gpus import ChildGpus
from doctor.facts.sampling.nvml_child import serve
from doctor.facts.sampling.sampler import Sampler
from doctor.model.samples import GpuSeries

# Answers like nvml_child.py for one GPU; FAULT ("hang", "crash", "garble") strikes at request number AT.
STAND_IN = r"""
import json, os, signal, sys, time
fault, at = sys.argv[1], int(sys.argv[2])
print('{"ready": 1}', flush=True)
for n, line in enumerate(sys.stdin, 1):
    cmd, t = line.split()
    if n == at and fault == "hang":
        time.sleep(3600)
    if n == at and fault == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    if n == at and fault == "garble":
        print("{not json", flush=True)
        continue
    if cmd == "open":
        reply = {"reason": "", "statics": {"0": {"index": 0, "name": "Tesla V100-SXM2-16GB", "sm_clock_max_mhz": 1530}}}
    elif cmd == "tick":
        reply = {"samples": {"0": {"t_s": float(t), "sm_clock_mhz": 1530, "util_gpu_pct": 97}},
                 "meta": {"0": {"unavailable": {"memory_temperature_c": "not reported"}, "pcie_source": "throughput"}}}
    else:
        reply = {"end": {"0": {"counters": {"window_s": float(t), "energy_j": 12.5}, "pcie_source": "throughput",
                               "unavailable": {}}}, "cpu_s": 0.01}
    print(json.dumps(reply), flush=True)
    if cmd == "end":
        break
"""


@pytest.fixture
def stand_in(monkeypatch):
    def use(fault: str = "none", at: int = 0) -> None:
        monkeypatch.setattr(child_gpus, "child_command", lambda indices: [sys.executable, "-c", STAND_IN, fault, str(at)])

    return use


def ticks(gpus: ChildGpus, n: int) -> list:
    return [gpus.tick(0.1 * k) for k in range(1, n + 1)]


def test_a_child_that_answers_gives_limits_samples_and_the_windows_counters(stand_in):
    stand_in()
    gpus = ChildGpus([0], timeout_s=5)
    assert gpus.open(0.0) == ""
    assert gpus.statics[0] == GpuSeries(index=0, name="Tesla V100-SXM2-16GB", sm_clock_max_mhz=1530)
    got = ticks(gpus, 3)
    assert [s[0].sm_clock_mhz for s in got] == [1530] * 3 and round(got[2][0].t_s, 3) == 0.3
    assert gpus.unavailable(0) == {"memory_temperature_c": "not reported"} and gpus.pcie_source(0) == "throughput"
    end = gpus.finish(1.0)[0]
    assert end.counters is not None and end.counters.energy_j == 12.5 and gpus.cpu_s == 0.01
    assert gpus.failure == "" and gpus._proc is not None and gpus._proc.poll() == 0  # it ended by itself


def test_a_hung_sample_ends_the_readings_at_the_deadline_and_kills_the_child(stand_in):
    stand_in("hang", at=4)  # open, 2 ticks, then the third tick hangs
    gpus = ChildGpus([0], timeout_s=0.25)
    assert gpus.open(0.0) == ""
    t0 = time.monotonic()
    got = ticks(gpus, 3)
    took = time.monotonic() - t0
    assert [bool(s) for s in got] == [True, True, False]
    assert gpus.failure.startswith("NVML stopped answering after 2 samples: no answer within 0.25 s (a call into "
                                   "libnvidia-ml.so hangs")
    assert 0.25 <= took < 0.25 + 0.5, took
    assert gpus._proc is not None and gpus._proc.poll() is not None  # killed, not left hanging
    assert gpus.tick(0.5) == {} and gpus.finish(0.6) == {}  # nothing more is asked of it


def test_a_child_that_crashes_at_a_sample_is_named_with_its_signal(stand_in):
    stand_in("crash", at=3)
    gpus = ChildGpus([0], timeout_s=5)
    gpus.open(0.0)
    got = ticks(gpus, 3)
    assert [bool(s) for s in got] == [True, False, False]
    assert gpus.failure.startswith("NVML crashed after 1 sample (SIGSEGV inside libnvidia-ml.so")


def test_a_hang_in_open_is_a_failure_after_0_samples(stand_in):
    stand_in("hang", at=1)
    gpus = ChildGpus([0], timeout_s=0.2)
    assert gpus.open(0.0) == "" and gpus.statics == {}
    assert gpus.failure.startswith("NVML stopped answering after 0 samples")


def test_a_garbled_answer_is_a_reason_not_an_exception(stand_in):
    stand_in("garble", at=2)
    gpus = ChildGpus([0], timeout_s=5)
    gpus.open(0.0)
    assert gpus.tick(0.1) == {}
    assert "could not be read" in gpus.failure and gpus._proc is not None and gpus._proc.poll() is not None


def test_hurry_cuts_a_hung_wait_short(stand_in):
    """An interrupt (watch's stop(wait_s=...)) while a call hangs: the wait ends at the limit, not the deadline."""
    stand_in("hang", at=2)
    gpus = ChildGpus([0], timeout_s=30)
    gpus.open(0.0)
    threading.Timer(0.2, gpus.hurry, args=(0.1,)).start()
    t0 = time.monotonic()
    assert gpus.tick(0.1) == {}
    assert time.monotonic() - t0 < 1.0
    assert gpus.failure == ""  # unanswered for well under a second: nothing claimed about NVML
    assert gpus._proc is not None and gpus._proc.poll() is not None


def test_the_sampler_keeps_the_samples_before_a_hang_and_says_why_they_end(stand_in):
    stand_in("hang", at=5)  # open and 3 ticks answered
    clock = iter(0.1 * k for k in range(100))
    sampler = Sampler([0], hz=5, clock=lambda: next(clock), nvml_timeout_s=0.2, isolated=True).start(background=False)
    for _ in range(5):
        sampler.tick()
    assert sampler.nvml_failure.startswith("NVML stopped answering after 3 samples")
    series = sampler.stop()
    assert len(series.gpus[0].samples) == 3 and series.nvml_stopped == sampler.nvml_failure
    assert series.gpus[0].name == "Tesla V100-SXM2-16GB" and series.gpus[0].counters is None
    assert series.gpus[0].unavailable == {"memory_temperature_c": "not reported"}


def test_a_hang_in_the_windows_end_counters_is_named_and_the_samples_kept(stand_in):
    stand_in("hang", at=4)  # open, 2 ticks, then `end` hangs
    clock = iter(0.1 * k for k in range(100))
    sampler = Sampler([0], hz=5, clock=lambda: next(clock), nvml_timeout_s=0.2, isolated=True).start(background=False)
    sampler.tick()
    sampler.tick()
    series = sampler.stop()
    assert series.nvml_stopped.startswith("NVML stopped answering after 2 samples: no answer within 0.2 s")
    assert len(series.gpus[0].samples) == 2 and series.gpus[0].counters is None


class _Pipe:
    def __init__(self):
        self.lines: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.lines.append(data)

    def flush(self) -> None:
        pass


def test_the_real_child_answers_each_request_in_one_line():
    """nvml_child.serve over an in-process fake pynvml: open, tick and end, each one JSON line, then it returns."""
    import fake_nvml

    from doctor.facts.sampling.local_gpus import LocalGpus

    out = _Pipe()
    serve(LocalGpus([0], fake_nvml.sampled_v100()), iter([b"open 0.0\n", b"tick 0.2\n", b"tick 0.4\n", b"end 0.6\n",
                                                          b"tick 0.8\n"]), out)
    replies = [json.loads(line) for line in out.lines]
    assert replies.pop(0) == {"ready": 1}
    assert len(replies) == 4  # nothing is answered after `end`
    assert replies[0]["reason"] == "" and replies[0]["statics"]["0"]["index"] == 0
    assert replies[1]["samples"]["0"]["t_s"] == 0.2 and "0" in replies[1]["meta"]
    assert replies[2]["meta"] == {}  # unchanged refusals and PCIe source are not sent again
    assert "counters" in replies[3]["end"]["0"] and replies[3]["cpu_s"] >= 0


def test_the_real_child_starts_and_says_why_nvml_did_not_open_here():
    """The real module in a real child: on a machine without libnvidia-ml.so it answers `open` with the reason
    (where NVML exists it opens, and `finish` ends it)."""
    gpus = ChildGpus([0], timeout_s=30)
    reason = gpus.open(0.0)
    assert gpus.failure == ""
    if reason:
        assert gpus.statics == {} and gpus._proc is not None and gpus._proc.wait(timeout=5) == 0
    else:
        gpus.tick(0.1)
        gpus.finish(0.2)
    gpus.close()


def test_a_slow_start_is_not_blamed_on_nvml(monkeypatch):
    """The child's interpreter start-up has its own allowance; NVML's deadline starts at `open`."""
    monkeypatch.setattr(child_gpus, "child_command", lambda indices: [sys.executable, "-c", "import time; time.sleep(30)"])
    monkeypatch.setattr(child_gpus, "START_TIMEOUT_S", 0.3)
    gpus = ChildGpus([0], timeout_s=0.1)
    assert gpus.open(0.0) == "" and gpus.statics == {}
    assert gpus.failure.startswith("the NVML sampler did not start within")
    assert "NVML stopped answering" not in gpus.failure


def test_the_real_nvml_is_sampled_in_the_child_by_default():
    from doctor.facts.sampling.local_gpus import LocalGpus

    assert isinstance(Sampler([0])._gpus, ChildGpus)  # built, not started: no child yet
    import fake_nvml

    assert isinstance(Sampler([0], nvml_module=fake_nvml.v100())._gpus, LocalGpus)  # a fake cannot cross processes


def test_what_crosses_the_pipe_comes_back_equal():
    """A sample, the limits and the window's end read in the child equal what the in-process sampler would keep."""
    import fake_nvml

    from doctor.facts.sampling.local_gpus import GpuEnd, LocalGpus
    from doctor.model.samples import GpuSample
    from doctor.model.serialize import from_jsonable, to_jsonable

    gpus = LocalGpus([0], fake_nvml.sampled_v100(byte_counters=True))
    gpus.open(0.0)
    sent = [gpus.statics[0], gpus.tick(0.1)[0], gpus.tick(0.3)[0], gpus.finish(0.5)[0]]
    assert sent[1].processes and sent[3].counters is not None and sent[3].counters.pcie_rx_bytes
    kinds = [GpuSeries, GpuSample, GpuSample, GpuEnd]
    assert [from_jsonable(k, json.loads(json.dumps(to_jsonable(v)))) for k, v in zip(kinds, sent)] == sent
