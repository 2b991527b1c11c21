"""The plain CLI's probe progress on stderr, drawn from the run's typed probe events."""

from __future__ import annotations

import io

from doctor.model.events import ProbeCancelled, ProbeFailed, ProbePhase, ProbeProgress, ProbeRate
from doctor.probe.console import ConsoleProgress


def test_phases_timed_runs_and_failures_are_lines_and_progress_counts_in_place():
    out = io.StringIO()
    console = ConsoleProgress(out, live=True)
    for event in (ProbePhase("start"), ProbePhase("build", "JIT-building ExLlamaV2"),
                  ProbeProgress(12, 47, "", "objects"), ProbeRate(60.0, "warmup"),
                  ProbeRate(63.8, "decode", 1, 0.98, 0.0), ProbeFailed("CUDA out of memory", "load"),
                  ProbeCancelled("decode")):
        console(event)
    lines = out.getvalue().split("\n")
    assert lines[0] == "probe: JIT-building ExLlamaV2"
    assert lines[1].startswith("\r  12/47 objects")  # the counter, then a new line before the next line
    assert lines[2] == "  run 1: 63.8 tok/s (CPU/wall 0.98, 0 page faults/token)"  # a warm-up step is not a line
    assert lines[3:6] == ["probe: failed in load: CUDA out of memory", "probe: cancelled during decode", ""]


def test_not_a_terminal_no_counter():
    out = io.StringIO()
    ConsoleProgress(out, live=False)(ProbeProgress(3, 10, "", "layers"))
    assert out.getvalue() == ""
