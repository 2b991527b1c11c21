"""The panels' display data: the probe's JSON-lines events, turned into typed events by the protocol,
folded into what the probe panel shows; a finished probe and verdict as the panels draw them."""

from __future__ import annotations

from probe_wire import EVENTS

from doctor.model.events import GpuReading, ProbeCancelled, ProbeFailed, ProbeFinished, ProbeRate, ProbeTimedOut
from doctor.render.panels import SPARK_POINTS, ProbeView, apply_probe_event, probe_view, verdict_view


def folded(events) -> ProbeView:
    view = ProbeView()
    for event in events:
        view = apply_probe_event(view, event)
    return view


def test_phase_progress_samples_and_readings_fold_into_the_view():
    view = folded(EVENTS)
    assert (view.state, view.phase, view.done, view.total) == ("running", "decode", 128, 384)
    assert view.tok_s == (30.5, 58.0, 63.8)
    assert (view.mem_clock_mhz, view.temperature_c, view.pcie_rx_mbs) == (877, 64, 9.5)
    assert view.message.startswith("timed decode")


def test_a_new_phase_resets_progress_and_takes_its_own_total():
    view = folded(EVENTS[:5])
    assert (view.phase, view.done, view.total) == ("load", 20, 40)
    view = apply_probe_event(view, EVENTS[5])
    assert (view.phase, view.done, view.total) == ("warmup", 0, 256)


def test_every_ending_is_seen():
    running = folded(EVENTS)
    assert apply_probe_event(running, ProbeFinished("64.1 tok/s decode")).state == "done"
    failed = apply_probe_event(running, ProbeFailed("CUDA out of memory"))
    assert (failed.state, failed.error) == ("failed", "CUDA out of memory")
    assert apply_probe_event(running, ProbeTimedOut("decode")).error == "timed out in decode"
    assert apply_probe_event(running, ProbeCancelled("decode")).state == "cancelled"


def test_the_sparkline_keeps_the_latest_points_only():
    view = folded(ProbeRate(float(i)) for i in range(SPARK_POINTS + 10))
    assert len(view.tok_s) == SPARK_POINTS and view.tok_s[-1] == SPARK_POINTS + 9


def test_a_reading_changes_only_the_fields_it_carries():
    view = folded(EVENTS)
    after = apply_probe_event(view, GpuReading(temperature_c=70))
    assert (after.temperature_c, after.mem_clock_mhz, after.pcie_rx_mbs) == (70, 877, 9.5)


def test_no_probe_and_no_verdict_draw_nothing():
    assert probe_view(None) is None and verdict_view(None) is None
    assert probe_view({"not": "a probe"}) is None and verdict_view([1, 2]) is None
