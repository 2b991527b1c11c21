"""The probe as a stage after the checks: whether it can run, running it, folding it into the Report.

Used by `v100-doctor --model PATH` (after the checks), `v100-doctor probe` and the TUI, so the
three never disagree about when the probe is skipped or how its outcome becomes findings.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any

from doctor.engines.in_force import in_force
from doctor.model.facts import Facts
from doctor.model.findings import Finding, Status
from doctor.model.ids import CheckId, Engine
from doctor.model.plan import Plan
from doctor.model.probe_results import ProbeReport
from doctor.model.report import Report
from doctor.model.verdict import NoCeiling
from doctor.probe.protocol import ProbeSpec
from doctor.probe.runner import SyntheticRequest, default_sampler, run_probe, run_synthetic_probe
from doctor.run.engine_stage import ENGINE_PROBES, EngineRequest, run_engine_probe, with_engine_probe
from doctor.run.probe_setup import (
    ProbeSink,
    budgeted_seq_len,
    card_of,
    engine_in_force,
    install_commands,
    skip_reason,
    spec_for,
    synthetic_size_gb,
    typed_relay,
)
from doctor.verdict.batched import measured_in_turn
from doctor.verdict.build import DECODE_SPEED_TITLE, build_verdict, expected_share_of, verdict_finding
from doctor.verdict.failures import failure_finding, merge_findings
from doctor.verdict.speed_rule import decode_speed_status


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


def with_probe(report: Report, probe: ProbeReport) -> Report:
    """Put a finished (or failed) probe into the report: findings, verdict, errors."""
    if probe.streams is not None:  # `probe --streams`, live or recorded: today's concurrency verdict
        from doctor.run.streams_stage import with_streams  # lazy: as the stage

        return with_streams(report, probe)
    if probe.of_engine:  # an engine's own probe, live or recorded: judged by today's engine verdict
        return with_engine_probe(report, probe)
    timings = {**report.timings_ms, "probe_ms": round(probe.seconds * 1000, 1)}
    if not probe.ok:
        finding = failure_finding(probe, report.plan.max_seq_len, report.plan.cache_mode, install_commands(report),
                                  card_of(report))
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
