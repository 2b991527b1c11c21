"""One Run: a Source resolved once (doctor/facts/source.py), today's checks on its facts, the probe recorded with
them judged again by today's verdict, and every step told to the subscribers as a typed event (doctor/model/events.py).

The CLI's plain text, JSON, Markdown and Prometheus outputs and the TUI are subscribers of the same Run, so a
replay means one thing in every face: the same findings, the same verdict, the same exit code.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable, Iterable

from doctor.facts.source import GatherOptions, base_plan, is_live, resolve
from doctor.model.errors import UsageError
from doctor.model.events import ChecksChosen, ReportReady, RunEvent
from doctor.model.plan import Plan
from doctor.model.source import Source, ThisMachine

if TYPE_CHECKING:
    from checks.base import Check
    from doctor.facts.python.torch_facts import TorchGatherer
    from doctor.model.facts import Facts
    from doctor.model.report import Report
    from doctor.probe.runner import SyntheticRequest

Subscriber = Callable[[RunEvent], None]
ChooseChecks = Callable[[Plan, "Facts | None"], "tuple[Check, ...]"]


@dataclass(frozen=True)
class ProbeRequest:
    """The timed probe a live Run takes after its checks: the plain CLI's with --model, or `v100-doctor probe`'s."""

    asked: bool = False  # `probe`: a probe that cannot run is a failure, not a skip, and it runs without --model
    synthetic: SyntheticRequest | None = None  # measure a random-weight model sized for the card instead of --model
    sampling: bool = True  # NVML sampled during the timed runs
    settings: tuple[tuple[str, Any], ...] = ()  # ProbeSpec fields the user set (tokens, runs, warm-up, ...)
    engine_options: tuple[tuple[str, object], ...] = ()  # EngineRequest fields for an engine's own probe (doctor/run/engine_stage.py)
    streams: tuple[int, ...] = ()  # `probe --streams`: concurrent streams against the server at engine_url, or in
    # the engine in force, driven by the doctor (no engine_url; `settings` then sets its tokens, warm-up, prompt); both
    # take `settings`' runs, settle_pct and settle_budget_s: each round repeated until its totals settle
    engine_url: str = ""
    stream_tokens: int = 128


@dataclass(frozen=True)
class Run:
    source: Source = ThisMachine()
    plan_overrides: Callable[[Plan], Plan] | None = None  # the user's flags over the source's own plan
    checks: tuple[Check, ...] | ChooseChecks | None = None  # None: the checks that apply to the plan and the GPUs
    # seen; a function of (plan, facts): `probe`'s checks for the engine in force (facts None before they are read)
    options: GatherOptions = GatherOptions()  # how a live source is gathered
    probe: ProbeRequest | None = None  # a live run: the timed probe after the checks, or a `probe` line saying why not

    @property
    def live(self) -> bool:
        return is_live(self.source)

    def planned(self, plan: Plan) -> Plan:
        return self.plan_overrides(plan) if self.plan_overrides is not None else plan

    def _checks(self, plan: Plan, facts: Facts | None) -> tuple[Check, ...]:
        from doctor.run.pipeline import default_checks  # lazy: as in execute

        if callable(self.checks):
            return tuple(self.checks(plan, facts))
        return self.checks if self.checks is not None else default_checks(plan, facts)

    def control(self) -> RunControl:
        """A handle a screen keeps to stop this run's gathering when the user quits."""
        return RunControl()

    def execute(self, on_event: Subscriber | None = None, control: RunControl | None = None) -> Report:
        """Resolve the source, run the checks, fold in a recorded probe; every step an event, the report last."""
        from doctor.run.pipeline import diagnose  # lazy: the checks load when the run executes, after the TUI's first frame

        emit = on_event or (lambda event: None)
        options = self.options
        if self.live:
            emit(ChecksChosen(_ids(self._checks(self.planned(base_plan(self.source)), None)), True))
            if options.torch_gatherer is None and control is not None:  # a screen may stop it when the user quits
                options = control.started(options)
        resolved = resolve(self.source, options)
        plan = self.planned(resolved.plan)
        if resolved.provenance.recorded:
            require_recorded_gpus(plan, resolved.facts)
        if self.checks is None and resolved.probe is not None and resolved.probe.asked:  # a `probe` report: its checks
            from doctor.run.probe_stage import probe_checks  # lazy: as the probe stage

            checks = probe_checks(plan, resolved.facts)
        else:
            checks = self._checks(plan, resolved.facts)
        emit(ChecksChosen(_ids(checks), False, resolved.provenance))
        report = diagnose(plan, resolved.facts, source=resolved.provenance, note=resolved.note, checks=checks,
                          on_event=emit)
        if resolved.probe is not None:  # measured on the recorded machine; today's verdict on it
            from doctor.run.probe_stage import with_probe  # lazy: the probe stage (runner, synthetic models) loads only when a run holds or takes a probe

            report = with_probe(report, resolved.probe)
        elif self.probe is not None and self.live and self.probe.streams and self.probe.engine_url:
            from doctor.probe.streams import StreamsOptions  # lazy: the HTTP client only for --streams
            from doctor.run.streams_stage import run_streams  # lazy: as the probe stage

            report = run_streams(report, self.probe.engine_url,
                                 StreamsOptions(self.probe.streams, self.probe.stream_tokens, **dict(self.probe.settings)),
                                 emit)
        elif self.probe is not None and self.live and self.probe.streams:  # the engine in force, driven by the doctor
            from doctor.run.streams_stage import drive_streams  # lazy: as the probe stage

            report = drive_streams(report, self.probe.streams, emit, synthetic=self.probe.synthetic,
                                   **dict(self.probe.settings))
        elif self.probe is not None and self.live and (self.probe.asked or report.plan.model_path
                                                       or report.plan.engine_server is not None):
            from doctor.run.probe_stage import after_checks  # lazy: the probe stage (runner, synthetic models) loads only when a run holds or takes a probe

            report = after_checks(report, asked=self.probe.asked, synthetic=self.probe.synthetic, on_event=emit,
                                  sampling=self.probe.sampling, engine_options=self.probe.engine_options,
                                  **dict(self.probe.settings))  # measured here, now
        emit(ReportReady(report))
        return report


class RunControl:
    """What a screen holds to stop a live run's gathering when the user quits (the torch child)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._torch: TorchGatherer | None = None
        self._stopped = False  # a quit before the gathering started: its torch child is stopped as it starts

    def started(self, options: GatherOptions) -> GatherOptions:
        from doctor.facts.python.torch_facts import TorchGatherer  # lazy: a replay reads no torch install

        with self._lock:
            gatherer = TorchGatherer(timeout_s=options.torch_timeout_s, fresh=options.fresh,
                                     use_cache=options.use_cache)
            self._torch = gatherer
            if self._stopped and gatherer.child is not None:  # quit came first: never wait out its timeout
                gatherer.child.kill()
        return replace(options, torch_gatherer=gatherer)

    @property
    def gatherer(self) -> TorchGatherer | None:
        """The torch-facts gatherer of the gathering in progress (None before it starts, or for a replay)."""
        with self._lock:
            return self._torch

    def stop(self) -> None:
        """Kill the torch child of a gathering in progress, so quitting never waits out its timeout."""
        with self._lock:
            self._stopped = True
            child = getattr(self._torch, "child", None)
        if child is not None:
            child.kill()


def require_recorded_gpus(plan: Plan, facts: Facts) -> None:
    """--gpu N on a saved report that has no GPU N is a usage error naming the GPUs it has: nvidia-smi on this
    machine cannot help (on a live run, gpu-present says which GPUs NVML sees and how to list them)."""
    have = [g.index for g in facts.nvml.gpus]
    missing = [i for i in (plan.gpu_indices or ()) if i not in have]
    if have and missing:
        raise UsageError(f"--gpu {missing[0]}: the report has GPU {', '.join(map(str, have))} (NVML numbers, as "
                         "recorded); pick one of those, or leave --gpu out to judge every GPU")


def _ids(checks: Iterable[Check]) -> tuple[tuple[str, str], ...]:
    return tuple((c.id, c.title) for c in checks)
