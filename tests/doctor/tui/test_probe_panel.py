"""The probe panel: events of the probe protocol folded into what the panel shows, and the app drawing them."""

from __future__ import annotations

from doctor.tui.app import DoctorApp
from doctor.tui.probe_panel import ProbePanel
from doctor.tui.probe_state import SPARK_POINTS, ProbeView, fold
from tui_support import HEALTHY, fixture_session, run_app, settle

# A probe as the runner relays it (doctor/probe/__init__.py, protocol 1), with the TUI's "gpu" readings between.
EVENTS = [
    {"event": "phase", "phase": "start", "message": "probe worker started", "total": None, "pid": 4242},
    {"event": "phase", "phase": "build", "message": "JIT-building ExLlamaV2's CUDA extension", "total": 47},
    {"event": "progress", "phase": "build", "done": 47, "total": 47, "unit": "objects", "message": "47 of 47 units"},
    {"event": "phase", "phase": "load", "message": "loading", "total": None},
    {"event": "progress", "phase": "load", "done": 20, "total": 40, "unit": "modules", "message": ""},
    {"event": "phase", "phase": "warmup", "message": "warm-up: 256 decode tokens", "total": 256},
    {"event": "sample", "phase": "warmup", "tok_s": 30.5, "pass": 1},
    {"event": "gpu", "mem_clock_mhz": 877, "temperature_c": 61, "pcie_rx_mbs": 12.0},
    {"event": "sample", "phase": "warmup", "tok_s": 58.0, "pass": 1},
    {"event": "phase", "phase": "decode", "message": "timed decode: 3 runs of 128 tokens (pass 1)", "total": 384},
    {"event": "sample", "phase": "decode", "run": 1, "tokens": 128, "tok_s": 63.8, "cpu_wall": 1.0},
    {"event": "progress", "phase": "decode", "done": 128, "total": 384, "unit": "tokens"},
    {"event": "gpu", "mem_clock_mhz": 877, "temperature_c": 64, "pcie_rx_mbs": 9.5},
]


def folded(events) -> ProbeView:
    view = ProbeView()
    for event in events:
        view = fold(view, event)
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
    view = fold(view, EVENTS[5])
    assert (view.phase, view.done, view.total) == ("warmup", 0, 256)


def test_every_ending_is_seen():
    running = folded(EVENTS)
    assert fold(running, {"event": "result", "summary": "64.1 tok/s decode"}).state == "done"
    failed = fold(running, {"event": "error", "kind": "oom", "phase": "load", "message": "CUDA out of memory"})
    assert (failed.state, failed.error) == ("failed", "CUDA out of memory")
    assert fold(running, {"event": "timeout", "phase": "decode", "limit_s": 900}).error == "timed out in decode"
    assert fold(running, {"event": "cancelled", "phase": "decode"}).state == "cancelled"


def test_the_sparkline_keeps_the_latest_points_only():
    view = folded({"event": "sample", "tok_s": float(i)} for i in range(SPARK_POINTS + 10))
    assert len(view.tok_s) == SPARK_POINTS and view.tok_s[-1] == SPARK_POINTS + 9


def test_unknown_events_and_garbage_values_change_nothing():
    view = folded(EVENTS)
    assert fold(view, {"event": "mystery", "tok_s": 1}) == view
    assert fold(view, {"event": "gpu", "temperature_c": "hot", "mem_clock_mhz": None}) == view


def test_the_app_draws_the_probe_as_its_events_arrive():
    def replay_probe(report, on_event, cancel):
        for event in EVENTS:
            on_event(event)
        return report

    async def script(app, pilot):
        await settle(app, pilot)
        await pilot.press("p")
        await app.workers.wait_for_complete()
        await pilot.pause()
        panel = app.query_one(ProbePanel)
        texts = {n: str(panel.query_one(f"#probe-{n}").render()) for n in ("phase", "speed", "live")}
        return app.query_one("#probe-row").display, texts, panel.query_one("#probe-spark").data

    shown, texts, spark = run_app(DoctorApp(fixture_session(HEALTHY, run_probe=replay_probe)), script)
    assert shown
    assert texts["phase"].startswith("decode runs: timed decode")
    assert texts["speed"] == "63.8 tok/s"
    assert texts["live"] == "mem 877 MHz · 64 °C · PCIe RX 0.01 GB/s"
    assert spark == [30.5, 58.0, 63.8]


def test_p_where_the_probe_cannot_run_says_why_as_the_plain_run_does():
    from doctor.model.findings import Status
    from doctor.run.live_probe import run_probe_for_tui
    from tui_support import TORCH_211

    async def script(app, pilot):
        await settle(app, pilot)
        await pilot.press("p")
        await app.workers.wait_for_complete()
        await pilot.pause()
        return app.checklist.findings.get("probe"), app.probe_state, app.checklist.symbol_of("probe")

    finding, state, symbol = run_app(DoctorApp(fixture_session(TORCH_211, run_probe=run_probe_for_tui)), script)
    assert finding.status is Status.SKIP and "cuda-pairing" in finding.summary and symbol == "–"
    assert state.state == "skipped" and "cuda-pairing" in state.error


def test_the_samplers_latest_reading_reaches_the_screen_as_gpu_events():
    import time

    from doctor.model.samples import GpuSample
    from doctor.run import live_probe as probe_feed

    class FakeSampler:
        def __init__(self):
            self.stopped = False

        def latest(self, index):
            return GpuSample(t_s=1.0, mem_clock_mhz=810, temperature_c=86, pcie_rx_mbs=11000.0)

        def stop(self):
            self.stopped = True
            return "the series"

    events: list[dict] = []
    sampler = FakeSampler()
    relay = probe_feed._Relay(sampler, 0, events.append)
    deadline = time.monotonic() + 5
    while not events and time.monotonic() < deadline:
        time.sleep(0.05)
    assert relay.stop() == "the series" and sampler.stopped
    assert events[0] == {"event": "gpu", "mem_clock_mhz": 810, "temperature_c": 86, "pcie_rx_mbs": 11000.0}
    view = fold(ProbeView(), events[0])
    assert (view.mem_clock_mhz, view.temperature_c, view.pcie_rx_mbs) == (810, 86, 11000.0)
