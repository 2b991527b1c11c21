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
from doctor.engines.in_force import in_force
from doctor.model.events import ProbeEvent
from doctor.model.facts import Facts
from doctor.model.findings import Finding, Status
from doctor.model.ids import CheckId, Engine
from doctor.model.plan import Plan
from doctor.model.probe_results import ProbeReport
from doctor.model.report import Report
from doctor.model.units import GIB, MIB
from doctor.model.unknown import known
from doctor.model.verdict import NoCeiling
from doctor.probe.protocol import ProbeSpec, screen_events
from doctor.probe.runner import SyntheticRequest, default_sampler, run_probe, run_synthetic_probe
from doctor.probe.synthetic import target_bytes_for
from doctor.run.engine_stage import ENGINE_PROBES, EngineRequest, run_engine_probe, with_engine_probe
from doctor.verdict.batched import measured_in_turn
from doctor.verdict.build import DECODE_SPEED_TITLE, build_verdict, expected_share_of, verdict_finding
from doctor.verdict.failures import failure_finding, merge_findings
from doctor.verdict.speed_rule import decode_speed_status

ProbeSink = Callable[[ProbeEvent], None]  # a run's subscriber for the probe's typed events (the console, the TUI)


def engine_in_force(report: Report) -> tuple[str, str]:
    """(the engine the plan runs, why): --engine, the launch config, the model's format, what is installed."""
    chosen = report.engine_in_force or in_force(report.plan, report.facts)  # the engine the checks judged, as they did
    return ("exllamav2" if chosen.engine in (Engine.EXLLAMAV2, Engine.TABBYAPI) else str(chosen.engine)), chosen.why


def probe_checks(plan: Plan, facts: Facts | None) -> tuple:
    """`probe`'s checks, those that decide whether the engine in force can run: the card's for every engine, torch's
    pairing for the torch engines, ExLlamaV2's readiness (and flash-attn) for ExLlamaV2 alone. Before the facts are
    read, from the plan: a GGUF or --engine names the engine. A replay of a `probe` report makes the same choice."""
    from checks.manifest import COMPUTE_CAPABILITY, CUDA_PAIRING, ENV_CHECKS, GPU_PRESENT, PROBE_CHECKS  # lazy: the checks load when a probe run starts

    server = plan.engine_server
    if server is not None and not server.local and not server.problem:  # --engine-url on another host: its card is
        return ()  # not this one's, so nothing of this machine decides whether it runs; only its timed probe
    if facts is not None:
        engine = in_force(plan, facts).engine
    elif plan.engine is not None:
        engine = Engine(plan.engine)
    else:
        engine = Engine.LLAMA_CPP if (plan.model_path or "").lower().endswith(".gguf") else Engine.EXLLAMAV2
    if engine in (Engine.EXLLAMAV2, Engine.TABBYAPI):
        return tuple(ENV_CHECKS) + tuple(PROBE_CHECKS)
    return (GPU_PRESENT, COMPUTE_CAPABILITY) + ((CUDA_PAIRING,) if engine == Engine.TRANSFORMERS else ())


def skip_reason(report: Report, synthetic: bool = False, engine: str = "exllamav2") -> str | None:
    """Why the probe of `engine` cannot run here, in one line; None when it can."""
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
    if engine in ("llama.cpp", "ollama"):  # no torch, no ExLlamaV2: the probe itself says whether llama.cpp runs
        return None
    if pairing is not None and pairing.status is Status.FAIL:
        return f"torch cannot run on this card yet (cuda-pairing: {pairing.summary}); its fix first, then the probe"
    ready = report.finding(CheckId.EXLLAMAV2_READY)
    if engine == "exllamav2" and ready is not None and ready.evidence.get("probe_can_run") is False:
        return f"ExLlamaV2 is not ready (exllamav2-ready: {ready.summary}); its fix first, then the probe"
    return None


def skip_finding(reason: str, asked: bool) -> Finding:
    """The probe did not run: a failure when it was asked for (`probe`), a skip after the checks."""
    return Finding(id=CheckId.PROBE, title="Timed ExLlamaV2 probe", status=Status.FAIL if asked else Status.SKIP,
                   summary=f"not run: {reason}", evidence={"reason": reason})


def after_checks(report: Report, *, asked: bool = False, synthetic: SyntheticRequest | None = None,
                 on_event: ProbeSink | None = None, cancel: threading.Event | None = None, sampling: bool = True,
                 engine_options: tuple[tuple[str, object], ...] = (), **spec_overrides: Any) -> Report:
    """Run the probe of the engine in force when it can run; otherwise say why, as the `probe` finding."""
    engine, chosen = engine_in_force(report)
    server = report.plan.engine_server is not None  # --engine-url: the running server, whatever its engine
    if engine in ENGINE_PROBES or server:  # llama.cpp, Ollama, Transformers, a server: the engine's own probe
        why = None if server else skip_reason(report, synthetic=synthetic is not None, engine=engine)
        if why:
            probe = ProbeReport(status="skipped", summary=why, engine=engine, asked=asked)
        else:
            options = {"sampling": sampling, **_engine_settings(spec_overrides), **dict(engine_options)}
            if synthetic is not None and not options.get("synthetic_gb"):
                options["synthetic_gb"] = synthetic.target_gb or synthetic_size_gb(report)
            request = EngineRequest(engine=engine, why=chosen, synthetic=synthetic is not None, asked=asked, **options)
            probe = run_engine_probe(report, request, on_event=on_event)
        return with_engine_probe(report, probe)
    why = skip_reason(report, synthetic=synthetic is not None)
    if why:
        return replace(report, findings=report.findings + (skip_finding(why, asked),))
    done = run_stage(report, spec_for(report.plan, budgeted_seq_len(report), **spec_overrides), synthetic, on_event=on_event,
                     cancel=cancel, sampling=sampling)
    return replace(done, probe=replace(done.probe, asked=True)) if asked and done.probe is not None else done


def _engine_settings(spec: dict) -> dict:
    """The ExLlamaV2 probe's settings that mean the same for an engine's own probe."""
    names = {"tokens": "tokens", "runs": "runs", "warmup_tokens": "warmup", "prompt_tokens": "prompt"}
    return {names[k]: v for k, v in spec.items() if k in names}


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


def _card(report: Report) -> tuple[str, str] | None:
    """(cc, name) of the card the probe ran on, from the report's own facts."""
    gpu = report.facts.gpu(report.plan.gpu_index)
    if gpu is None or not known(gpu.compute_capability):
        return None
    return str(gpu.compute_capability), str(gpu.name) if known(gpu.name) else "this GPU"


def with_probe(report: Report, probe: ProbeReport) -> Report:
    """Put a finished (or failed) probe into the report: findings, verdict, errors."""
    if probe.streams is not None:  # `probe --streams`, live or recorded: today's concurrency verdict
        from doctor.run.streams_stage import with_streams  # lazy: as the stage

        return with_streams(report, probe)
    if probe.of_engine:  # an engine's own probe, live or recorded: judged by today's engine verdict
        return with_engine_probe(report, probe)
    timings = {**report.timings_ms, "probe_ms": round(probe.seconds * 1000, 1)}
    if not probe.ok:
        finding = failure_finding(probe, report.plan.max_seq_len, report.plan.cache_mode, _install_commands(report),
                                  _card(report))
        errors = report.errors + ((f"probe {probe.status}: {probe.summary}",) if probe.status == "cancelled" else ())
        return replace(report, probe=probe, findings=merge_findings(report.findings, [finding]), timings_ms=timings,
                       errors=errors)
    try:
        verdict = build_verdict(probe, report.facts, report.plan)
    except NoCeiling as exc:
        assert probe.result is not None  # probe.ok: a result
        speed = Finding(id=CheckId.DECODE_SPEED, title=DECODE_SPEED_TITLE, status=decode_speed_status(None, None),
                        summary=f"{probe.result.decode_tok_s:.1f} tok/s measured; no ceiling to compare with: {exc}",
                        evidence={"measured_tok_s": probe.result.decode_tok_s})
        return replace(report, probe=probe, timings_ms=timings, findings=merge_findings(report.findings, [speed]))
    except Exception as exc:  # noqa: BLE001 - the measurement is still worth its report
        return replace(report, probe=probe, timings_ms=timings,
                       errors=report.errors + (f"verdict failed: {type(exc).__name__}: {exc} (a bug; please report it)",))
    expected = expected_share_of(probe.result, report.facts, report.plan) if probe.result else None
    batched = measured_in_turn(report.batched_decode, probe, verdict, report.facts, report.plan)  # no --model: the probe's
    return replace(report, probe=probe, verdict=verdict, timings_ms=timings, batched_decode=batched,
                   findings=merge_findings(report.findings, [verdict_finding(verdict, expected)]))
