"""The probe's JSON lines as the typed events a screen gets: every kind the worker, the child runner and
the sampler relay, and lines that do not fit."""

from __future__ import annotations

import pytest

from doctor.model.events import GpuReading, ProbeCancelled, ProbeFailed, ProbeFinished, ProbePhase, ProbeProgress, ProbeRate, ProbeTimedOut
from doctor.probe.protocol import screen_events


@pytest.mark.parametrize("wire, expected", [
    ({"event": "phase", "phase": "load", "message": "loading", "total": None}, (ProbePhase("load", "loading", None),)),
    ({"event": "progress", "phase": "build", "done": 3, "total": 47, "message": "3 of 47", "unit": "units"},
     (ProbeProgress(3.0, 47.0, "3 of 47", "units"),)),
    ({"event": "sample", "phase": "decode", "tok_s": 63.8, "run": 1, "cpu_wall": 0.98, "faults_per_token": 0},
     (ProbeRate(63.8, "decode", 1, 0.98, 0.0),)),
    ({"event": "sample", "phase": "warmup", "tok_s": 60.0}, (ProbeRate(60.0, "warmup"),)),
    ({"event": "result", "summary": "64.1 tok/s decode"}, (ProbeFinished("64.1 tok/s decode"),)),
    ({"event": "error", "kind": "oom", "message": "CUDA out of memory", "phase": "load"},
     (ProbeFailed("CUDA out of memory", "load"),)),
    ({"event": "error", "kind": "internal"}, (ProbeFailed("the probe failed"),)),
    ({"event": "timeout", "phase": "decode", "limit_s": 900}, (ProbeTimedOut("decode"),)),
    ({"event": "cancelled", "phase": "load"}, (ProbeCancelled("load"),)),
    ({"event": "gpu", "mem_clock_mhz": 877, "temperature_c": 61}, (GpuReading(mem_clock_mhz=877, temperature_c=61),)),
])
def test_each_kind_becomes_its_typed_event(wire, expected):
    assert screen_events(wire) == expected


def test_a_line_with_readings_gives_its_event_and_then_the_reading():
    events = screen_events({"event": "sample", "tok_s": 50, "mem_clock_mhz": 810})
    assert events == (ProbeRate(50.0), GpuReading(mem_clock_mhz=810.0))


@pytest.mark.parametrize("wire", [
    {"event": "mystery", "tok_s": 1},
    {"event": "sample", "tok_s": "fast"},
    {"event": "sample", "tok_s": True},
    {"event": "gpu", "temperature_c": "hot", "mem_clock_mhz": None},
    {},
])
def test_lines_that_do_not_fit_give_nothing(wire):
    assert screen_events(wire) == ()


def test_wrong_types_in_a_known_kind_are_dropped_not_raised():
    assert screen_events({"event": "progress", "done": "x", "total": [1]}) == (ProbeProgress(0.0, None, ""),)
