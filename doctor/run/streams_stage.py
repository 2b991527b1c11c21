"""`probe --streams`: the concurrency probe as a stage of the one Run, after the checks: its rounds go into
Report.probe.streams and its verdict (doctor/verdict/streams.py) into the findings; a replay judges the saved rounds
again with today's verdict. Against a running server (--engine-url), or in the engine in force, which the doctor
drives itself: ExLlamaV2's dynamic generator in the probe's child (doctor/probe/engine_streams.py), or the user's
llama-server started with --parallel (doctor/probe/llama_server_streams.py)."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable

from doctor.model.events import ProbeEvent, ProbeFailed, ProbeFinished, ProbePhase
from doctor.model.ids import CheckId
from doctor.model.probe_results import ProbeReport
from doctor.model.report import Report
from doctor.model.streams import StreamsProbe, rounds_said
from doctor.model.unknown import known
from doctor.probe.streams import StreamsOptions, probe_streams
from doctor.run import probe_setup as setup
from doctor.verdict.failures import failure_finding, merge_findings
from doctor.verdict.streams import judge

if TYPE_CHECKING:
    from doctor.probe.runner import SyntheticRequest

DRIVEN = ("exllamav2", "llama.cpp")  # the engines `probe --streams` starts itself; others through --engine-url
# llama-server's -fa and LLAMA_ARG_FLASH_ATTN words (https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md)
FA_WORDS = {"1": "on", "enabled": "on", "true": "on", "0": "off", "disabled": "off", "false": "off", "-1": "auto"}
DEFAULT_CONTEXT = 4096  # tokens per stream for llama-server when neither --max-seq-len nor the launch config's -c says


def with_streams(report: Report, probe: ProbeReport) -> Report:
    """The probe and its verdict in the report (live or recorded); a driven engine that failed before its first
    round also gets the finding that names the cause (out of memory at load, no ExLlamaV2, a failed JIT build)."""
    assert probe.streams is not None
    new = [judge(probe.streams)]
    if (probe.engine == "exllamav2" and probe.streams.driven and not probe.streams.rounds and probe.error_kind
            and probe.status not in ("ok", "skipped")):  # the timed probe's findings speak ExLlamaV2's settings
        cause = failure_finding(probe, report.plan.max_seq_len, report.plan.cache_mode, setup.install_commands(report),
                                setup.card_of(report))
        if cause.id != CheckId.PROBE:  # a generic failure says no more than the concurrency finding does
            new.append(cause)
    timings = {**report.timings_ms, "probe_ms": round(probe.seconds * 1000, 1)}
    errors = report.errors + ((f"probe {probe.status}: {probe.summary}",) if probe.status == "cancelled" else ())
    return replace(report, probe=probe, findings=merge_findings(report.findings, new), timings_ms=timings,
                   errors=errors)


def run_streams(report: Report, url: str, options: StreamsOptions, emit: Callable[[ProbeEvent], None]) -> Report:
    emit(ProbePhase("streams", f"{len(options.counts)} rounds of concurrent streams against {url}"))
    streams = probe_streams(url, options, say=lambda text: emit(ProbePhase("streams", text)))
    ok = bool(streams.rounds) and not streams.error
    summary = rounds_said(streams.rounds, measured_only=False) if ok else f"the concurrency probe could not run: {streams.error}"
    probe = ProbeReport(status="ok" if ok else "failed", summary=summary, streams=streams, seconds=streams.seconds,
                        asked=True)
    out = with_streams(report, probe)
    emit(ProbeFinished(summary) if ok else ProbeFailed(summary, "streams"))
    return out


def drive_streams(report: Report, counts: tuple[int, ...], emit: Callable[[ProbeEvent], None], *,
                  synthetic: SyntheticRequest | None = None, **spec_overrides: Any) -> Report:
    """`probe --streams` without --engine-url: the engine in force, started by the doctor on the plan's model (or a
    synthetic one), N streams at once per round: ExLlamaV2's dynamic generator, or the user's llama-server with
    --parallel; an engine it cannot drive is said, with --engine-url as the way."""
    engine, chosen = setup.engine_in_force(report)
    model = report.plan.model_path or ""
    tokens = int(spec_overrides.get("tokens", 128))
    why, bad_input = None, engine not in DRIVEN
    if engine not in DRIVEN:
        why = (f"--streams drives ExLlamaV2 and llama-server itself; the engine in force here is {engine} ({chosen}): "
               "start its server with parallel slots and give --engine-url URL (OLLAMA_NUM_PARALLEL=N, vLLM, TabbyAPI)")
    else:
        why = setup.skip_reason(report, synthetic=synthetic is not None, engine=engine)
    if why is None and engine == "llama.cpp":
        launch, why, bad_input = llama_server_launch(report, counts, synthetic=synthetic is not None)
    if why:
        streams = StreamsProbe("", "", model, tokens, error=why, engine=engine, bad_input=bad_input)
        return with_streams(report, ProbeReport(status="skipped", summary=why, streams=streams, asked=True,
                                                engine=engine, model_path=model))
    if engine == "llama.cpp":
        repeat = {k: spec_overrides[k] for k in ("runs", "settle_pct", "settle_budget_s") if k in spec_overrides}
        probe = _llama_server(report, launch, StreamsOptions(counts, tokens, **repeat), emit, synthetic)
    else:
        probe = _exl2(report, counts, emit, synthetic, spec_overrides)
    out = with_streams(report, probe)
    emit(ProbeFinished(probe.summary) if probe.status == "ok" else ProbeFailed(probe.summary, probe.error_phase or "streams"))
    return out


def _llama_server(report: Report, launch: Any, options: StreamsOptions, emit: Callable[[ProbeEvent], None],
                  synthetic: SyntheticRequest | None) -> ProbeReport:
    """The user's llama-server on their GGUF, or on a synthetic Q4_K_M GGUF of the 27B layer shape written first
    (removed after, unless --keep-synthetic)."""
    from doctor.probe.llama_server_streams import drive  # lazy: as the probe stage
    from doctor.run.engine_stage import write_synthetic_gguf  # lazy: as the probe stage

    say = lambda text: emit(ProbePhase("streams", text))  # noqa: E731 - the stage's one progress line
    if synthetic is None:
        return drive(launch, options, say=say)
    folder = synthetic.keep_dir or tempfile.mkdtemp(prefix="v100-doctor-streams-")
    try:
        path, label = write_synthetic_gguf(folder, synthetic.target_gb or setup.synthetic_size_gb(report), None, say)
        probe = drive(replace(launch, model=path), options, say=say)
        return replace(probe, synthetic=label, streams=replace(probe.streams, model=label) if probe.streams else None)
    except (OSError, ImportError) as exc:
        why = f"cannot write the synthetic GGUF to {folder}: {exc}"
        return ProbeReport(status="failed", summary=why, asked=True, engine="llama.cpp",
                           streams=StreamsProbe("", "", "", options.tokens, error=why, engine="llama-server"))
    finally:
        if not synthetic.keep_dir:
            shutil.rmtree(folder, ignore_errors=True)


def llama_server_launch(report: Report, counts: tuple[int, ...], synthetic: bool = False) -> tuple[Any, str | None, bool]:
    """(how to start the user's llama-server, or None; why not; whether that is the user's input to fix); with
    `synthetic` its model is written later."""
    from doctor.probe.llama_server_streams import ServerLaunch  # lazy: as the probe stage

    plan, engines, model = report.plan, report.facts.engines, report.facts.model
    binary = engines.llama_cpp.binaries.get("llama-server") if engines is not None else None
    if not binary:
        return None, ("--streams with llama.cpp starts your llama-server, and none is on PATH (the engine facts found "
                      "no llama-server binary): build or install llama.cpp's server, or start one and give --engine-url "
                      "URL"), False
    path = "synthetic.gguf" if synthetic else (
        str(model.resolved) if model is not None and known(model.resolved) else (plan.model_path or ""))
    if not path.lower().endswith(".gguf"):
        return None, f"--streams with llama.cpp serves a GGUF file: give --model FILE.gguf (not {path or 'nothing'})", True
    launch = plan.engine_launch
    env = engines.env if engines is not None else {}  # llama-server reads LLAMA_ARG_* when no flag says otherwise

    def setting(of_launch: str | None, name: str, default: str) -> str:
        return of_launch or env.get(name, "").strip() or default

    fa = setting(launch.flash_attn if launch is not None else None, "LLAMA_ARG_FLASH_ATTN", "on")
    context = plan.max_seq_len or (launch.n_ctx if launch is not None and launch.n_ctx else None) or DEFAULT_CONTEXT
    return ServerLaunch(binary, path, max(counts), context, flash_attn=FA_WORDS.get(fa.lower(), fa),
                        cache_type_k=setting(launch.cache_type_k if launch is not None else None,
                                             "LLAMA_ARG_CACHE_TYPE_K", "f16"),
                        cache_type_v=setting(launch.cache_type_v if launch is not None else None,
                                             "LLAMA_ARG_CACHE_TYPE_V", "f16"),
                        gpu_index=plan.gpu_index), None, False


def _exl2(report: Report, counts: tuple[int, ...], emit: Callable[[ProbeEvent], None],
          synthetic: SyntheticRequest | None, spec_overrides: dict[str, Any]) -> ProbeReport:
    """ExLlamaV2's dynamic generator in the probe's child, on the plan's model or a synthetic one."""
    from doctor.probe.engine_streams import run_exl2_streams  # lazy: as the probe stage
    from doctor.probe.runner import run_synthetic_probe  # lazy: as the probe stage

    spec = replace(setup.spec_for(report.plan, setup.budgeted_seq_len(report), **spec_overrides), streams=counts,
                   measure_bandwidth=False)
    relay = setup.typed_relay(emit)
    emit(ProbePhase("streams", f"{len(counts)} rounds of concurrent jobs in ExLlamaV2's dynamic generator"))
    if synthetic is None:
        return run_exl2_streams(spec, on_event=relay)
    if synthetic.target_gb is None:
        synthetic = replace(synthetic, target_gb=setup.synthetic_size_gb(report))
    probe = run_synthetic_probe(spec, synthetic, on_event=relay, measure=lambda s: run_exl2_streams(s, on_event=relay))
    if probe.streams is None:  # the synthetic model could not be written: nothing was driven
        probe = replace(probe, asked=True, engine="exllamav2",
                        streams=StreamsProbe("", "", "", spec.tokens, error=probe.summary, engine="exllamav2"))
    return probe
