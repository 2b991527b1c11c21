"""The probe as a stage after the checks: whether it can run, running it, folding it into the Report.

Used by `v100-doctor --model PATH` (after the checks), `v100-doctor probe` and the TUI, so the
three never disagree about when the probe is skipped or how its outcome becomes findings.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from dataclasses import replace
from typing import Any, Callable

from checks.prescription.probe_install import probe_install_commands
from doctor.model.events import ProbeEvent
from doctor.model.findings import Finding, Status
from doctor.model.ids import CheckId
from doctor.model.plan import Plan
from doctor.model.probe_results import ProbeReport
from doctor.model.report import Report
from doctor.model.units import GIB, MIB
from doctor.model.unknown import known
from doctor.model.verdict import NoCeiling
from doctor.probe.protocol import ProbeSpec, screen_events
from doctor.probe.runner import SyntheticRequest, default_sampler, run_probe, run_synthetic_probe
from doctor.probe.synthetic import target_bytes_for
from doctor.verdict.build import DECODE_SPEED_TITLE, build_verdict, verdict_finding
from doctor.verdict.failures import failure_finding, merge_findings

ProbeSink = Callable[[ProbeEvent], None]  # a run's subscriber for the probe's typed events (the console, the TUI)


def skip_reason(report: Report, synthetic: bool = False) -> str | None:
    """Why the probe cannot run here, in one line; None when it can."""
    if not synthetic and not report.plan.model_path:
        return "no model was given (--model PATH); `v100-doctor probe --synthetic` measures the engine without one"
    model = report.facts.model
    if not synthetic and model is not None and model.kind == "hub-headers":
        repo, _, revision = model.path.partition("@")
        download = f"hf download {repo}" + (f" --revision {revision}" if revision else "")
        return (f"{model.path} is planned from its headers on the Hugging Face Hub; its weights are not here "
                f"({download}, then the same command measures it)")
    if report.plan.target_gpu:
        return (f"planning for {report.plan.target_gpu}, a card that is not this one; the same command without "
                "--target-gpu on a machine with that card measures it")
    elsewhere = "; on a machine with the card the same command measures it (`v100-doctor demo` shows recorded runs)"
    gpu = report.finding(CheckId.GPU_PRESENT)
    if gpu is not None and gpu.status is not Status.PASS:
        return f"no usable GPU ({gpu.summary}){elsewhere}"
    if gpu is None and not report.facts.nvml.gpus:
        return f"no usable GPU ({report.facts.nvml.reason or 'NVML reports none'}){elsewhere}"
    pairing = report.finding(CheckId.CUDA_PAIRING)
    if pairing is not None and pairing.status is Status.FAIL:
        return f"torch cannot run on this card yet (cuda-pairing: {pairing.summary}); its fix first, then the probe"
    ready = report.finding(CheckId.EXLLAMAV2_READY)
    if ready is not None and ready.evidence.get("probe_can_run") is False:
        return f"ExLlamaV2 is not ready (exllamav2-ready: {ready.summary}); its fix first, then the probe"
    return None


def skip_finding(reason: str, asked: bool) -> Finding:
    """The probe did not run: a failure when it was asked for (`probe`), a skip after the checks."""
    return Finding(id=CheckId.PROBE, title="Timed ExLlamaV2 probe", status=Status.FAIL if asked else Status.SKIP,
                   summary=f"not run: {reason}", evidence={"reason": reason})


def after_checks(report: Report, *, asked: bool = False, synthetic: SyntheticRequest | None = None,
                 on_event: ProbeSink | None = None, cancel: threading.Event | None = None, sampling: bool = True,
                 **spec_overrides: Any) -> Report:
    """Run the probe when it can run; otherwise say why, as the `probe` finding."""
    why = skip_reason(report, synthetic=synthetic is not None)
    if why:
        return replace(report, findings=report.findings + (skip_finding(why, asked),))
    return run_stage(report, spec_for(report.plan, budgeted_seq_len(report), **spec_overrides), synthetic, on_event=on_event, cancel=cancel,
                     sampling=sampling)


def budgeted_seq_len(report: Report) -> int | None:
    """The max_seq_len the memory budget judged (the user's, or ExLlamaV2's default), so the probe loads what was
    budgeted rather than a length of its own."""
    budget = report.finding(CheckId.MEMORY_BUDGET)
    seq = budget.evidence.get("max_seq_len") if budget is not None else None
    return report.plan.max_seq_len or (int(seq) if isinstance(seq, int) else None)


def spec_for(plan: Plan, max_seq_len: int | None = None, **overrides: Any) -> ProbeSpec:
    return ProbeSpec(model_path=plan.model_path or "", max_seq_len=plan.max_seq_len or max_seq_len, cache_mode=plan.cache_mode,
                     gpu_split=plan.gpu_split, gpu_index=plan.gpu_index, **overrides)


def synthetic_size_gb(report: Report, cap_gb: float | None = None) -> float:
    """A synthetic model sized for this card, its free RAM and the temp disk."""
    gpu = report.facts.gpu(report.plan.gpu_index)
    free = gpu.memory_free_mib * MIB if gpu and known(gpu.memory_free_mib) else None
    ram = report.facts.host.ram_available_mib * MIB if known(report.facts.host.ram_available_mib) else None
    try:
        disk = shutil.disk_usage(tempfile.gettempdir()).free
    except OSError:
        disk = None
    kw = {"cap_gb": cap_gb} if cap_gb else {}
    return round(target_bytes_for(free, ram, disk, **kw) / GIB, 2)


def run_stage(report: Report, spec: ProbeSpec, synthetic: SyntheticRequest | None = None, *,
              on_event: ProbeSink | None = None, cancel: threading.Event | None = None, sampling: bool = True) -> Report:
    """Run the probe and return the report with its probe, verdict and findings folded in."""
    sampler = default_sampler if sampling else None
    relay = typed_relay(on_event) if on_event is not None else None
    if synthetic is not None:
        if synthetic.target_gb is None:
            synthetic = replace(synthetic, target_gb=synthetic_size_gb(report))
        probe = run_synthetic_probe(spec, synthetic, on_event=relay, cancel=cancel, sampler_factory=sampler)
    else:
        probe = run_probe(spec, on_event=relay, cancel=cancel, sampler_factory=sampler)
    return with_probe(report, probe)


def typed_relay(on_event: ProbeSink) -> Callable[[dict], None]:
    """The runner's JSON-lines events as the typed events a subscriber gets (doctor.probe.protocol.screen_events)."""
    def relay(wire: dict) -> None:
        for event in screen_events(wire):
            on_event(event)

    return relay


def _install_commands(report: Report) -> tuple[str, ...]:
    """The machine's torch route, then exllamav2 + tokenizers keeping that torch (checks/prescription/probe_install.py)."""
    torch = report.facts.python.torch
    version = str(torch.version) if torch.installed and known(torch.version) else None
    return tuple(probe_install_commands(report.prescription, version))


def with_probe(report: Report, probe: ProbeReport) -> Report:
    """Put a finished (or failed) probe into the report: findings, verdict, errors."""
    timings = {**report.timings_ms, "probe_ms": round(probe.seconds * 1000, 1)}
    if not probe.ok:
        finding = failure_finding(probe, report.plan.max_seq_len, report.plan.cache_mode, _install_commands(report))
        errors = report.errors + ((f"probe {probe.status}: {probe.summary}",) if probe.status == "cancelled" else ())
        return replace(report, probe=probe, findings=merge_findings(report.findings, [finding]), timings_ms=timings,
                       errors=errors)
    try:
        verdict = build_verdict(probe, report.facts, report.plan)
    except NoCeiling as exc:
        assert probe.result is not None  # probe.ok: a result
        speed = Finding(id=CheckId.DECODE_SPEED, title=DECODE_SPEED_TITLE, status=Status.INFO,
                        summary=f"{probe.result.decode_tok_s:.1f} tok/s measured; no ceiling to compare with: {exc}",
                        evidence={"measured_tok_s": probe.result.decode_tok_s})
        return replace(report, probe=probe, timings_ms=timings, findings=merge_findings(report.findings, [speed]))
    except Exception as exc:  # noqa: BLE001 - the measurement is still worth its report
        return replace(report, probe=probe, timings_ms=timings,
                       errors=report.errors + (f"verdict failed: {type(exc).__name__}: {exc} (a bug; please report it)",))
    return replace(report, probe=probe, verdict=verdict, timings_ms=timings,
                   findings=merge_findings(report.findings, [verdict_finding(verdict, bool(probe.synthetic))]))
