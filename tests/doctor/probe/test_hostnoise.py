"""Settling the timed runs and naming the host's share of their spread, on recorded-style runs."""

from doctor.model.probe_results import DecodeRun
from doctor.probe.hostnoise import HostSnapshot, between
from doctor.probe.hoststate import instability_cause, settled_window, unsettled


def run(n: int, tok_s: float, **kw) -> DecodeRun:
    return DecodeRun(run=n, tokens=128, seconds=128 / tok_s, tok_s=tok_s, past_len=127, cpu_s=1.0, cpu_wall=1.0,
                     minor_faults=0, major_faults=0, **kw)


def test_the_window_settles_only_when_its_last_runs_agree():
    runs = [run(1, 86.2), run(2, 81.6), run(3, 66.7)]
    assert settled_window(runs, 3, 3.0) == 0
    runs += [run(4, 92.7), run(5, 92.9), run(6, 93.7)]
    assert settled_window(runs, 3, 3.0) == 3


def test_steal_and_other_processes_are_named_as_the_cause():
    runs = (run(1, 93.0, steal_pct=0.1), run(2, 74.6, steal_pct=18.0, busy_others=("stress (pid 9): 1.00 cores",)))
    text = unsettled(runs, 2, 3.0, 45)
    assert "did not settle" in text and "run 2" in text and "18% steal" in text and "stress (pid 9)" in text


def test_no_moving_counter_is_said_plainly():
    assert "no host counter moved" in instability_cause((run(1, 93.0), run(2, 80.0)))


def test_a_snapshot_pair_reads_this_host():
    a = HostSnapshot.now()
    noise = between(a, HostSnapshot.now(), 0.01)
    assert noise.steal_pct >= 0 and noise.involuntary_switches >= 0


def _pass(speeds, window=3):
    from doctor.model.probe_results import DecodePass

    return DecodePass(index=1, load_s=1.0, warmup_tokens=256, warmup_s=3.0,
                      runs=tuple(run(i + 1, s) for i, s in enumerate(speeds)), window=window)


def test_a_pace_that_moved_before_the_runs_settled_is_named():
    """The H200 EXL2 probe (benchmarks/results/issue17-h200/probe_exl2_27_h200_2.json): 58-81, then 104.5 steady."""
    from doctor.probe.hoststate import pace_shift

    text = pace_shift(_pass([63.7, 59.8, 62.0, 62.1, 58.3, 80.7, 104.5, 104.5, 104.3]))
    assert text.startswith("Decode settled only on runs 7-9 of 9; 6 earlier runs ran at 58.3-80.7 tok/s, up to 44%")
    assert "No host counter moved" in text


def test_settling_at_once_or_within_noise_is_not_a_shift():
    from doctor.probe.hoststate import pace_shift

    assert pace_shift(_pass([97.6, 97.6, 95.8])) == ""  # settled on the first three
    assert pace_shift(_pass([92.0, 97.1, 96.3, 96.9, 96.0])) == ""  # an earlier run 4.5% off: noise, not a new pace
    assert pace_shift(_pass([50.0, 97.1, 96.3, 96.9], window=0)) == ""  # unsettled: that text says it instead
