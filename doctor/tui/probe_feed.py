"""The one place that knows the probe runner's and the verdict's data shapes: it runs the probe for
the TUI, relays the sampler's live readings as events, and turns a ProbeReport and a verdict
into the panels' display data (ProbeView, VerdictView). No textual here, no diagnosis either.
"""

from __future__ import annotations

import argparse
import threading
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable

from doctor.model.unknown import known
from doctor.tui.probe_state import ProbeView
from doctor.tui.verdict_state import CauseBar, VerdictView

if TYPE_CHECKING:
    from doctor.model.report import Report

LIVE_EVERY_S = 0.5  # how often the sampler's latest reading is put on screen while the probe runs


def probe_arguments(args: argparse.Namespace) -> dict:
    """Session fields for `p`: the probe of --model, or the engine self-test (a synthetic model) without one."""
    return {"run_probe": run_probe_for_tui, "auto_probe": bool(getattr(args, "model", None))}


def run_probe_for_tui(report: Report, on_event: Callable[[dict], None], cancel: threading.Event) -> Report:
    """doctor.run.probe_stage's run, with the sampler's latest readings relayed to the screen; the report comes
    back with the probe, its verdict and findings folded in by the stage, exactly as the CLI gets them."""
    from doctor.probe.runner import SyntheticRequest, run_probe, run_synthetic_probe
    from doctor.verdict.failures import merge_findings
    from doctor.run.probe_stage import fold, skip_finding, skip_reason, spec_for, synthetic_size_gb

    synthetic = not report.plan.model_path
    why = skip_reason(report, synthetic=synthetic)
    if why:  # as after the checks in the plain run: a `probe` line that says why
        on_event({"event": "skipped", "message": why})
        return replace(report, findings=merge_findings(report.findings, [skip_finding(why, asked=False)]))
    gpu = report.facts.gpu(report.plan.gpu_index)
    if gpu is not None and known(gpu.mem_clock_max_mhz):
        on_event({"event": "gpu", "mem_clock_max_mhz": gpu.mem_clock_max_mhz})
    spec, factory = spec_for(report.plan), live_sampler_factory(on_event)
    if synthetic:
        request = SyntheticRequest(target_gb=synthetic_size_gb(report))
        probe = run_synthetic_probe(spec, request, on_event=on_event, cancel=cancel, sampler_factory=factory)
    else:
        probe = run_probe(spec, on_event=on_event, cancel=cancel, sampler_factory=factory)
    return fold(report, probe)


def live_sampler_factory(on_event: Callable[[dict], None]):
    """The runner's own sampler, plus a thread that relays its latest reading as a "gpu" event."""
    from doctor.probe.runner import default_sampler

    def factory(pid: int, gpus: list[int]) -> Any:
        sampler = default_sampler(pid, gpus)
        return None if sampler is None else _Relay(sampler, gpus[0], on_event)

    return factory


class _Relay:
    def __init__(self, sampler: Any, index: int, on_event: Callable[[dict], None]) -> None:
        self.sampler, self.index, self.on_event = sampler, index, on_event
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="v100-doctor-tui-relay", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(LIVE_EVERY_S):
            sample = self.sampler.latest(self.index)
            if sample is not None:
                self.on_event({"event": "gpu", "mem_clock_mhz": sample.mem_clock_mhz,
                               "temperature_c": sample.temperature_c, "pcie_rx_mbs": sample.pcie_rx_mbs})

    def stop(self) -> Any:
        self._stop.set()
        self._thread.join(timeout=2 * LIVE_EVERY_S)
        return self.sampler.stop()


def probe_view(probe: Any) -> ProbeView | None:
    """A finished probe (a ProbeReport, or its JSON from a saved report) as the probe panel draws it."""
    from doctor.model.probe_results import ProbeReport

    probe = _as(ProbeReport, probe)
    if probe is None:
        return None
    state = {"ok": "done", "cancelled": "cancelled"}.get(probe.status, "failed")
    speeds = tuple(run.tok_s for p in probe.result.passes for run in p.runs) if probe.result else ()
    return ProbeView(state=state, phase="done", done=1.0, total=1.0, tok_s=speeds,
                     reported_tok_s=probe.result.decode_tok_s if probe.result else None,
                     result=probe.summary if state == "done" else "",
                     error=f"{probe.status}: {probe.summary}" if state == "failed" else "",
                     **_last_readings(probe))


def _last_readings(probe: Any) -> dict:
    series = probe.samples
    gpus = getattr(series, "gpus", ()) if series is not None else ()
    if not gpus or not gpus[0].samples:
        return {}
    g, last = gpus[0], gpus[0].samples[-1]
    return {"mem_clock_mhz": last.mem_clock_mhz, "mem_clock_max_mhz": g.mem_clock_max_mhz,
            "temperature_c": last.temperature_c, "pcie_rx_mbs": last.pcie_rx_mbs}


# short labels for the bars; the cause's full title and evidence stay in the report and the headline
CAUSE_LABELS = {"kv-reads": "KV cache reads", "throttled-clocks": "throttled clocks", "cpu-offload": "CPU offload",
                "host-bound": "host-bound", "kernel-path": "kernel path", "gpu-contention": "other GPU procs",
                "unexplained": "unexplained"}


def verdict_view(verdict: Any) -> VerdictView | None:
    """The verdict (doctor.verdict.build.Verdict, or its JSON) as bars: ranked causes, fix first, the 64 tok/s reference."""
    from checks.knowledge.gpus import SEED_REFERENCE
    from doctor.model.verdict import Verdict

    v = _as(Verdict, verdict)
    if v is None:
        return None
    fix = v.fixes[0] if v.fixes else None
    fix_first = ""
    if fix is not None:
        gain = f" (+{fix.expected_gain_tok_s:.1f} tok/s expected)" if fix.expected_gain_tok_s else ""
        fix_first = fix.action + gain
    causes = tuple(CauseBar(CAUSE_LABELS.get(c.id, c.id), c.share, c.title) for c in v.causes)
    reference = float(SEED_REFERENCE["measured_tok_s"]) if v.reference else None
    return VerdictView(measured_tok_s=v.measured_tok_s, ceiling_tok_s=v.ceiling_tok_s, headline=v.headline,
                       fix_first=fix_first, reference_tok_s=reference,
                       reference_label=f"of V100 ref {reference:g}" if reference else "", causes=causes)


def _as(cls: type, value: Any) -> Any:
    """The dataclass itself, or rebuilt from a saved report's JSON; None when it does not fit."""
    if value is None or isinstance(value, cls):
        return value
    from doctor.model.serialize import LoadError, from_jsonable

    try:
        return from_jsonable(cls, value)
    except (LoadError, TypeError, ValueError):
        return None
