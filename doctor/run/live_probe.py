"""The probe stage for a screen that shows it live: the stage's run, with the sampler's latest readings
relayed as events. The TUI calls this on its worker thread; it gathers and decides nothing itself.
"""

from __future__ import annotations

import argparse
import threading
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable

from doctor.model.events import GpuReading, ProbeEvent, ProbeSkipped
from doctor.model.unknown import known

if TYPE_CHECKING:
    from doctor.model.report import Report

LIVE_EVERY_S = 0.5  # how often the sampler's latest reading is put on screen while the probe runs


def probe_arguments(args: argparse.Namespace) -> dict:
    """Session fields for `p`: the probe of --model, or the engine self-test (a synthetic model) without one,
    or why it is off."""
    if getattr(args, "no_probe", False):
        return {"no_probe_reason": "the probe is off (--no-probe)"}
    return {"run_probe": run_probe_for_tui,
            "auto_probe": bool(getattr(args, "model", None) or getattr(args, "engine_url", None))}


def run_probe_for_tui(report: Report, on_event: Callable[[ProbeEvent], None], cancel: threading.Event) -> Report:
    """doctor.run.probe_stage's run, its JSON-lines events turned into typed events and the sampler's latest
    readings relayed to the screen; the report comes back with the probe, its verdict and findings folded in
    by the stage, exactly as the CLI gets them."""
    from doctor.probe.runner import SyntheticRequest, run_probe, run_synthetic_probe  # lazy: the probe loads on `p`, after the first frame
    from doctor.run.probe_stage import (  # lazy: the probe stage loads when `p` is pressed, not before the TUI's first frame
        ENGINE_PROBES,
        budgeted_seq_len,
        engine_in_force,
        skip_finding,
        skip_reason,
        spec_for,
        synthetic_size_gb,
        typed_relay,
        with_probe,
    )
    from doctor.verdict.failures import merge_findings  # lazy: the verdict loads when `p` is pressed, not before the TUI's first frame

    synthetic = not report.plan.model_path
    if engine_in_force(report)[0] in ENGINE_PROBES or report.plan.engine_server is not None:  # its own probe
        return _engine_probe_for_tui(report, on_event, cancel, synthetic)
    why = skip_reason(report, synthetic=synthetic)
    if why:  # as after the checks in the plain run: a `probe` line that says why
        on_event(ProbeSkipped(why))
        return replace(report, findings=merge_findings(report.findings, [skip_finding(why, asked=False)]))
    gpu = report.facts.gpu(report.plan.gpu_index)
    if gpu is not None and known(gpu.mem_clock_max_mhz):
        on_event(GpuReading(mem_clock_max_mhz=gpu.mem_clock_max_mhz))
    spec, factory = spec_for(report.plan, budgeted_seq_len(report)), live_sampler_factory(on_event)
    relay = typed_relay(on_event)
    if synthetic:
        request = SyntheticRequest(target_gb=synthetic_size_gb(report))
        probe = run_synthetic_probe(spec, request, on_event=relay, cancel=cancel, sampler_factory=factory)
    else:
        probe = run_probe(spec, on_event=relay, cancel=cancel, sampler_factory=factory)
    return with_probe(report, probe)


def _engine_probe_for_tui(report: Report, on_event: Callable[[ProbeEvent], None], cancel: threading.Event,
                          synthetic: bool) -> Report:
    """The engine in force's own probe, as the plain run takes it after the checks (doctor/run/engine_stage.py), its
    phases and the sampler's latest readings relayed to the screen; quitting kills its child."""
    from doctor.model.probe_results import ProbeReport  # lazy: as the stage
    from doctor.probe.llamacpp import _sampler  # lazy: NVML only while a probe runs
    from doctor.run.engine_stage import EngineRequest, run_engine_probe, with_engine_probe  # lazy: on `p`
    from doctor.run.probe_stage import engine_in_force, skip_reason, synthetic_size_gb  # lazy: as run_probe_for_tui

    engine, chosen = engine_in_force(report)
    server = report.plan.engine_server is not None  # --engine-url: timed through its API, no child of ours
    why = None if server else skip_reason(report, synthetic=synthetic, engine=engine)
    if why:
        on_event(ProbeSkipped(why))
        return with_engine_probe(report, ProbeReport(status="skipped", summary=why, engine=engine))
    children: list[int] = []

    def factory(index: int, pid: int) -> Any:
        children.append(pid)
        if cancel.is_set():
            _kill(pid)
        sampler = _sampler(index, pid)
        return None if sampler is None else _Relay(sampler, index, on_event)

    stop_watch = threading.Event()

    def watch() -> None:  # a quit while the engine's child runs ends it, as the ExLlamaV2 runner does its worker
        while not stop_watch.wait(0.2):
            if cancel.is_set():
                for pid in children:
                    _kill(pid)
                return

    threading.Thread(target=watch, name="v100-doctor-engine-cancel", daemon=True).start()
    try:
        request = EngineRequest(engine=engine, why=chosen, synthetic=synthetic and not server, asked=False,
                                synthetic_gb=synthetic_size_gb(report) if synthetic and not server else None)
        probe = run_engine_probe(report, request, on_event=on_event, sampler=factory)
    finally:
        stop_watch.set()
    if cancel.is_set():
        probe = replace(probe, status="cancelled", summary="cancelled: the screen was closed")
    return with_engine_probe(report, probe)


def _kill(pid: int) -> None:
    import os  # lazy: only when a quit ends an engine's child
    import signal  # lazy: as os

    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:  # it had ended already
        pass


def live_sampler_factory(on_event: Callable[[ProbeEvent], None]) -> Callable[[int, list[int]], Any]:
    """The runner's own sampler, plus a thread that relays its latest reading as a GpuReading."""
    from doctor.probe.runner import default_sampler  # lazy: the probe's sampler loads when a probe starts

    def factory(pid: int, gpus: list[int]) -> Any:
        sampler = default_sampler(pid, gpus)
        return None if sampler is None else _Relay(sampler, gpus[0], on_event)

    return factory


class _Relay:
    def __init__(self, sampler: Any, index: int, on_event: Callable[[ProbeEvent], None]) -> None:
        self.sampler, self.index, self.on_event = sampler, index, on_event
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="v100-doctor-tui-relay", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(LIVE_EVERY_S):
            sample = self.sampler.latest(self.index)
            if sample is not None:
                self.on_event(GpuReading(mem_clock_mhz=sample.mem_clock_mhz, temperature_c=sample.temperature_c,
                                         pcie_rx_mbs=sample.pcie_rx_mbs))

    def stop(self) -> Any:
        self._stop.set()
        self._thread.join(timeout=2 * LIVE_EVERY_S)
        return self.sampler.stop()
