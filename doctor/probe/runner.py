"""The parent side of the probe: environment, the worker child, the NVML sampler, the outcome.

    report = run_probe(ProbeSpec(model_path=...), on_event=print)            # the user's model
    report = run_synthetic_probe(ProbeSpec(model_path=""), SyntheticRequest())  # engine self-test

Both return a ProbeReport (never raise for a probe that failed, hung or was cancelled); the
sampler from doctor.facts.sampling runs from the first timed phase to the end, and the phase windows
are kept on its clock so the verdict can read GPU utilisation during the decode runs only.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

from doctor.facts import sampling
from doctor.model.ids import FailureKind
from doctor.model.probe_results import PhaseWindow, ProbeReport, ProbeResult
from doctor.model.serialize import LoadError, from_jsonable
from doctor.probe.child import ChildOutcome, EventSink, child_env, run_child
from doctor.probe.protocol import TIMED_PHASES, ProbeSpec, spec_to_json

SamplerFactory = Callable[[int, list[int]], Any]  # (worker pid, gpu indices) -> object with .stop() -> SampleSeries


def default_sampler(pid: int, gpus: list[int]) -> Any:
    """The runtime-health sampler (doctor.facts.sampling), or None where it cannot run."""
    try:
        return sampling.start(gpus, pids=[pid], hz=5)
    except Exception:  # noqa: BLE001 - no NVML: the probe still measures, the verdict says what it lacks
        return None


@dataclass(frozen=True)
class SyntheticRequest:
    format: str = "gptq"  # see doctor.probe.synthetic.FORMATS
    target_gb: float | None = None  # None: sized for the card by the caller
    shape: str = "qwen-27b"  # layer shapes of the reference story's 27B class
    keep_dir: str | None = None  # write the model here and keep it (default: a temp dir, removed after)


class _Watch:
    """Starts the sampler at the first timed phase and records phase windows on its clock."""

    def __init__(self, spec: ProbeSpec, factory: SamplerFactory | None):
        self.spec, self.factory = spec, factory
        self.sampler: Any = None
        self.t0: float | None = None
        self.pid: int | None = None
        self.windows: list[PhaseWindow] = []
        self._open: tuple[str, float, int] | None = None
        self.pass_index = 1
        self.build_dir = ""

    def on_event(self, event: dict) -> None:
        if event.get("event") == "phase" and event.get("phase") == "start" and event.get("pid"):
            self.pid = int(event["pid"])
        if event.get("event") == "phase" and event.get("build_dir"):
            self.build_dir = str(event["build_dir"])

    def on_phase(self, phase: str, now: float) -> None:
        if phase == "reload":
            self.pass_index = 2
        if phase in TIMED_PHASES and self.sampler is None and self.factory and self.pid:
            gpus = list(range(len(self.spec.gpu_split))) if self.spec.gpu_split else [self.spec.gpu_index]
            self.sampler = self.factory(self.pid, gpus)
            self.t0 = now
        if self.t0 is None and phase in TIMED_PHASES and not self.factory:  # no sampler: windows on the runner's clock
            self.t0 = now
        self._close(now)
        if phase in TIMED_PHASES or phase == "warmup":
            self._open = (phase, now, self.pass_index)

    def _close(self, now: float) -> None:
        if self._open and self.t0 is not None:
            phase, start, index = self._open
            self.windows.append(PhaseWindow(phase, round(start - self.t0, 3), round(now - self.t0, 3), index))
        self._open = None

    def stop(self) -> Any:
        self._close(time.monotonic())
        if self.sampler is None:
            return None
        try:
            return self.sampler.stop()
        except Exception:  # noqa: BLE001
            return None


def worker_env(spec: ProbeSpec, base: dict[str, str] | None = None) -> dict[str, str]:
    """The user's environment as is (their failures are what we look for), plus the GPU they picked."""
    extra: dict[str, str] = {}
    env = os.environ if base is None else base
    if spec.gpu_index and not spec.gpu_split and "CUDA_VISIBLE_DEVICES" not in env:
        extra = {"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_VISIBLE_DEVICES": str(spec.gpu_index)}
    return child_env(extra, base)


def run_probe(spec: ProbeSpec, *, on_event: EventSink | None = None, cancel: threading.Event | None = None,
              timeouts: dict[str, float] | None = None, sampler_factory: SamplerFactory | None = default_sampler,
              python: str = sys.executable, env: dict[str, str] | None = None,
              worker_module: str = "doctor.probe.worker") -> ProbeReport:
    watch = _Watch(spec, sampler_factory)

    def relay(event: dict) -> None:
        watch.on_event(event)
        if on_event:
            on_event(event)

    started = time.time()
    try:
        outcome = run_child([python, "-m", worker_module], spec_to_json(spec), on_event=relay, timeouts=timeouts,
                            env=env or worker_env(spec), cancel=cancel, on_phase=watch.on_phase)
    finally:
        samples = watch.stop()
    if outcome.status in ("cancelled", "timeout") and outcome.phase == "build" and watch.build_dir:
        _remove_own_build_lock(watch.build_dir, started)
    return _report(spec, outcome, samples, tuple(watch.windows))


def _report(spec: ProbeSpec, outcome: ChildOutcome, samples: Any, windows: tuple[PhaseWindow, ...]) -> ProbeReport:
    base = dict(model_path=spec.model_path, synthetic=spec.label if spec.label.startswith("synthetic") else "",
                samples=samples, windows=windows, seconds=outcome.seconds)
    if outcome.status == "finished" and outcome.result:
        try:
            result = from_jsonable(ProbeResult, outcome.result.get("result"), "$.result")
        except LoadError as exc:
            return ProbeReport(status="failed", summary=f"the probe's result could not be read: {exc}", error_kind=FailureKind.INTERNAL,
                               error_phase="done", **base)
        return ProbeReport(status="ok", summary=result_summary(result), result=result, **base)
    err = outcome.error or {}
    detail = str(err.get("detail") or "")
    if outcome.log_tail and outcome.log_tail not in detail:
        detail = (detail + "\n--- worker log (tail) ---\n" + outcome.log_tail).strip()
    status = {"cancelled": "cancelled", "timeout": "timeout", "crashed": "crashed"}.get(outcome.status, "failed")
    return ProbeReport(status=status, summary=str(err.get("message") or f"the probe {status}"),
                       error_kind=FailureKind.from_wire(err.get("kind") or status), error_phase=str(err.get("phase") or outcome.phase),
                       error_detail=detail[-4000:], interrupted_by=outcome.signum, **base)


def result_summary(r: ProbeResult) -> str:
    p = r.reported
    text = (f"{r.decode_tok_s:.1f} tok/s decode (median of {len(p.runs)} x {p.runs[0].tokens if p.runs else 0} tokens, "
            f"spread {p.spread_pct:.1f}%), prefill {r.prefill.tok_s:,.0f} tok/s")
    flagged = [q for q in r.passes if q.flag]
    if flagged and r.reported_pass not in [q.index for q in flagged]:
        text += f"; load {flagged[0].index} was set aside ({flagged[0].median_tok_s:.1f} tok/s, host-bound)"
    return text


def _remove_own_build_lock(build_dir: str, started: float) -> None:
    """A build we killed leaves torch's 'lock' behind, and the next import would wait forever on it.
    Remove it only when it is ours: created after this probe started."""
    lock = Path(build_dir) / "lock"
    try:
        if lock.exists() and lock.stat().st_mtime >= started - 1:
            lock.unlink()
    except OSError:
        pass


def run_synthetic_probe(spec: ProbeSpec, request: SyntheticRequest, *, on_event: EventSink | None = None,
                        cancel: threading.Event | None = None, timeouts: dict[str, float] | None = None,
                        sampler_factory: SamplerFactory | None = default_sampler,
                        python: str = sys.executable,
                        measure: Callable[[ProbeSpec], ProbeReport] | None = None) -> ProbeReport:
    """Build a random-weight model in a child, probe it (`measure`: another probe of it, e.g. `probe --streams`'s),
    remove it (unless keep_dir)."""
    folder = request.keep_dir or tempfile.mkdtemp(prefix="v100-doctor-synthetic-")
    model_dir = os.path.join(folder, "model") if not request.keep_dir else folder
    try:
        cmd = [python, "-m", "doctor.probe.synthetic", "--out", model_dir, "--format", request.format, "--shape", request.shape]
        if request.target_gb:
            cmd += ["--target-gb", f"{request.target_gb:g}"]
        built = run_child(cmd, on_event=on_event, timeouts=timeouts, env=child_env(), cancel=cancel)
        if built.status != "finished" or not built.result:
            err = built.error or {}
            status = {"cancelled": "cancelled", "timeout": "timeout", "crashed": "crashed"}.get(built.status, "failed")
            return ProbeReport(status=status, summary=str(err.get("message") or "the synthetic model could not be built"),
                               model_path=model_dir, error_kind=FailureKind.from_wire(err.get("kind") or status), error_phase="synthetic",
                               error_detail=(str(err.get("detail") or "") + "\n" + built.log_tail).strip()[-4000:],
                               seconds=built.seconds)
        label = str(built.result.get("summary", "synthetic model"))
        spec = replace(spec, model_path=model_dir, label=label)
        report = measure(spec) if measure is not None else run_probe(
            spec, on_event=on_event, cancel=cancel, timeouts=timeouts, sampler_factory=sampler_factory, python=python)
        return replace(report, synthetic=label, seconds=round(report.seconds + built.seconds, 3))
    finally:
        if not request.keep_dir:
            shutil.rmtree(folder, ignore_errors=True)
