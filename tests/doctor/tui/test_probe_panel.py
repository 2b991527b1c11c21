"""The probe panel: the app drawing the probe's typed events as they arrive (the folding itself is
tested in tests/doctor/render/test_panels.py)."""

from __future__ import annotations

from probe_wire import EVENTS
from tui_support import HEALTHY, fixture_session, run_app, settle

from doctor.model.events import GpuReading
from doctor.render.panels import ProbeView, apply_probe_event
from doctor.tui.app import DoctorApp
from doctor.tui.probe_panel import ProbePanel


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
    from tui_support import TORCH_211

    from doctor.model.findings import Status
    from doctor.run.live_probe import run_probe_for_tui

    async def script(app, pilot):
        await settle(app, pilot)
        await pilot.press("p")
        await app.workers.wait_for_complete()
        await pilot.pause()
        return app.checklist.findings.get("probe"), app.probe_state, app.checklist.symbol_of("probe")

    finding, state, symbol = run_app(DoctorApp(fixture_session(TORCH_211, run_probe=run_probe_for_tui)), script)
    assert finding.status is Status.SKIP and "cuda-pairing" in finding.summary and symbol == "–"
    assert state.state == "skipped" and "cuda-pairing" in state.error


def test_the_samplers_latest_reading_reaches_the_screen_as_a_gpu_reading():
    import time

    from doctor.model.samples import GpuSample
    from doctor.run import live_probe

    class FakeSampler:
        def __init__(self):
            self.stopped = False

        def latest(self, index):
            return GpuSample(t_s=1.0, mem_clock_mhz=810, temperature_c=86, pcie_rx_mbs=11000.0)

        def stop(self):
            self.stopped = True
            return "the series"

    events: list[GpuReading] = []
    sampler = FakeSampler()
    relay = live_probe._Relay(sampler, 0, events.append)
    deadline = time.monotonic() + 5
    while not events and time.monotonic() < deadline:
        time.sleep(0.05)
    assert relay.stop() == "the series" and sampler.stopped
    assert events[0] == GpuReading(mem_clock_mhz=810, temperature_c=86, pcie_rx_mbs=11000.0)
    view = apply_probe_event(ProbeView(), events[0])
    assert (view.mem_clock_mhz, view.temperature_c, view.pcie_rx_mbs) == (810, 86, 11000.0)
