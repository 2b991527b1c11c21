"""The probe stage for the engine in force when it is not ExLlamaV2: llama.cpp (llama-cpp-python or llama-bench),
Transformers (+ bitsandbytes), Ollama through its server. The same place in the one Run as the ExLlamaV2 probe
(doctor/run/probe_stage.py): after the checks, with the same events, into the same Report (`probe`, with the
engine's own measurements, and `engine_verdict`), so JSON, --replay, the TUI and the exit code mean one thing.

`--synthetic` writes a random-weight model of the reference story's 27B layer shape in the engine's own format: a
Q4_K_M GGUF for llama.cpp (doctor/probe/synthetic_gguf.py), an FP16 Llama that bitsandbytes quantizes to NF4 as it
loads for Transformers (doctor/probe/synthetic.py). An engine the doctor cannot run here is said so, with the
reason, as the probe's outcome: never a figure.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from typing import Any, Callable

from doctor.model.engine_probe import LlamaCppProbe, TransformersProbe
from doctor.model.events import ProbeEvent, ProbeFailed, ProbeFinished, ProbePhase, ProbeSkipped
from doctor.model.probe_results import ProbeReport
from doctor.model.report import Report
from doctor.model.samples import SampleSeries
from doctor.model.unknown import known
from doctor.verdict import engine_probe
from doctor.verdict.failures import merge_findings

DEFAULT_CAP_GB = 6.0  # doctor/probe/synthetic.py's cap, when no size for the card was given
ENGINE_PROBES = ("llama.cpp", "ollama", "transformers", "vllm")  # the engines judged by a probe of their own
TRANSFORMERS_LAYERS = 8  # 27B-shape layers of the Transformers synthetic model: ~6.4 GB in FP16, ~1.8 GB in NF4
GGUF_LAYER_GB = 0.24  # one 27B-shape layer in Q4_K_M (15.3 GB / 64 layers, benchmarks/results/issue27-llamacpp)
ENV_SWITCHES = ("GGML_CUDA_DISABLE_GRAPHS", "GGML_CUDA_FORCE_MMQ", "GGML_CUDA_FORCE_CUBLAS", "CUDA_VISIBLE_DEVICES")

Sink = Callable[[ProbeEvent], None]


@dataclass(frozen=True)
class EngineRequest:
    """What `probe` (or the main command with --model) asks of an engine's probe."""

    engine: str  # llama.cpp | ollama | transformers
    why: str = ""  # why this engine is the one in force
    synthetic: bool = False
    synthetic_gb: float | None = None  # llama.cpp's synthetic GGUF size (the stage sizes it for the card, at most 6)
    synthetic_layers: int | None = None  # 27B-shape layers of the synthetic model (overrides synthetic_gb)
    keep_dir: str | None = None
    tokens: int = 128
    runs: int = 5
    warmup: int = 64
    prompt: int = 128
    compare: bool = False  # also the other installed engines on the same shape (the engine gap, measured)
    asked: bool = True  # `probe`: an engine that cannot be measured is a failure; after the checks, a skip
    sampling: bool = True  # NVML sampled while it runs


def synthetic_shape() -> Any:
    """The reference story's 27B layer shape (5120/21760, 40 heads, 8 KV heads): every engine's synthetic model."""
    from doctor.probe.synthetic import QWEN_27B_LIKE  # lazy: numpy loads with the synthetic writers

    return QWEN_27B_LIKE


def _say(on_event: Sink | None, phase: str, message: str) -> None:
    print(f"v100-doctor: {message}", file=sys.stderr) if on_event is None else on_event(ProbePhase(phase, message))


class _Keep:
    """The probe's sampler, its series kept for the report (every engine's NVML samples, summarised and stored)."""

    def __init__(self, sampler: Any, kept: list) -> None:
        self.sampler, self.kept = sampler, kept

    def latest(self, index: int) -> Any:
        return self.sampler.latest(index) if hasattr(self.sampler, "latest") else None

    def stop(self) -> Any:
        series = self.sampler.stop()
        self.kept.append(series)
        return series


def keeping_sampler(kept: list, base: Callable[[int, int], Any] | None = None) -> Callable[[int, int], Any]:
    from doctor.probe.llamacpp import _sampler  # lazy: NVML only while a probe runs

    def factory(index: int, pid: int) -> Any:
        s = (base or _sampler)(index, pid)
        return None if s is None else _Keep(s, kept)

    return factory


def run_engine_probe(report: Report, request: EngineRequest, on_event: Sink | None = None,
                     sampler: Callable[[int, int], Any] | None = None) -> ProbeReport:
    """Measure the engine in force (the user's model, or a synthetic one in its format) and return the ProbeReport;
    never raises for the engine's own failures: they are the outcome."""
    started = time.monotonic()
    kept: list[SampleSeries] = []
    factory = keeping_sampler(kept, sampler) if request.sampling else (lambda index, pid: None)
    folder = None
    try:
        if report.plan.engine_server is not None:  # --engine-url: the running server, timed through its API
            probe = _server(report, request, kept, on_event)
        elif request.engine in SERVED:
            probe = _served(report, request.engine)
        else:
            if request.synthetic:
                folder = request.keep_dir or tempfile.mkdtemp(prefix="v100-doctor-engine-")
            if request.engine == "transformers":
                probe = _transformers(report, request, folder, factory, on_event)
            else:
                probe = _llamacpp(report, request, folder, factory, on_event)
    except ImportError as exc:  # numpy/tokenizers write the synthetic models (they come with the engines)
        probe = ProbeReport(status="skipped", summary=f"the synthetic model needs numpy and tokenizers "
                            f"(pip install transformers brings both): {exc}", engine=request.engine)
    except OSError as exc:
        probe = ProbeReport(status="failed", summary=f"cannot write the synthetic model to {folder}: "
                            f"{exc.strerror or exc}; free some disk or give --keep-synthetic DIR on a larger disk",
                            engine=request.engine)
    finally:
        if folder and not request.keep_dir:
            shutil.rmtree(folder, ignore_errors=True)
    probe = replace(probe, seconds=round(time.monotonic() - started, 2), samples=kept[-1] if kept else None,
                    asked=request.asked)
    if on_event is not None:
        m = engine_probe.engine_result(probe)
        if probe.status == "ok":
            on_event(ProbeFinished(probe.summary))
        elif probe.status == "skipped" or (probe.server is not None and probe.server.input_error):
            on_event(ProbeSkipped(probe.summary))  # a server that could not be asked: the one-line error says it
        else:
            on_event(ProbeFailed(probe.summary, m.outcome if m is not None else ""))
    return probe


def _wrap(engine: str, measured: LlamaCppProbe | TransformersProbe, synthetic: str, **kw: Any) -> ProbeReport:
    ok = measured.outcome == "ok" and bool(measured.median_tok_s)
    summary = (f"{measured.median_tok_s:g} tok/s decode ({measured.backend}, median of "
               f"{len(measured.runs) - measured.dropped_runs} runs, spread {measured.spread_pct}%)") if ok else \
        f"{measured.backend}: {measured.outcome}: {measured.error or 'no result'}"
    return ProbeReport(status=engine_probe.outcome_status(measured.outcome), summary=summary,
                       model_path=measured.model_path, synthetic=synthetic, engine=engine, **kw)


def write_synthetic_gguf(folder: str, synthetic_gb: float | None, synthetic_layers: int | None,
                         say: Callable[[str], None] = lambda text: None) -> tuple[str, str]:
    """A random-weight Q4_K_M GGUF of the 27B layer shape in `folder`, as many layers as asked or as the size allows:
    (its path, its label). llama.cpp's probe and `probe --streams` with llama-server write it the same way."""
    from doctor.probe import synthetic_gguf  # lazy: the probe loads when it runs

    layers = synthetic_layers or max(2, min(64, int((synthetic_gb or DEFAULT_CAP_GB) / GGUF_LAYER_GB)))
    say(f"writing a random-weight Q4_K_M GGUF of the 27B layer shape ({layers} layers) ...")
    g = synthetic_gguf.write(os.path.join(folder, "synthetic-q4_k_m.gguf"), replace(synthetic_shape(), layers=layers,
                                                                                     vocab=8192))
    return g.path, g.label


def _llamacpp(report: Report, request: EngineRequest, folder: str | None, factory: Callable,
              on_event: Sink | None) -> ProbeReport:
    from doctor.facts.modeldir.gguf_header import read_gguf  # lazy: the header is read when the probe runs
    from doctor.probe import engine_gap, llamacpp  # lazy: the probe loads when it runs
    plan = report.plan
    launch = plan.engine_launch
    label = ""
    if folder is not None:
        path, label = write_synthetic_gguf(folder, request.synthetic_gb, request.synthetic_layers,
                                           lambda text: _say(on_event, "build", text))
    else:
        model = report.facts.model
        path = str(model.resolved) if model is not None and known(model.resolved) else (plan.model_path or "")
    o = llamacpp.ProbeOptions(n_ctx=(launch.n_ctx if launch and launch.n_ctx else None) or plan.max_seq_len or 4096,
                              n_gpu_layers=launch.n_gpu_layers if launch and launch.n_gpu_layers is not None else -1,
                              flash_attn=(launch.flash_attn if launch and launch.flash_attn else "on"),
                              cache_type_k=(launch.cache_type_k if launch and launch.cache_type_k else "f16"),
                              cache_type_v=(launch.cache_type_v if launch and launch.cache_type_v else "f16"),
                              tokens=request.tokens, runs=max(request.runs, 3), warmup=request.warmup,
                              prompt=request.prompt, gpu_index=plan.gpu_index)
    _say(on_event, "decode", f"probing {path} with llama.cpp (ctx {o.n_ctx}, flash attention {o.flash_attn}, K/V "
                             f"{o.cache_type_k}/{o.cache_type_v}) ...")
    header = read_gguf(path)
    env = {k: os.environ[k] for k in ENV_SWITCHES if os.environ.get(k)}
    results = [replace(r, shape=header.shape, weights=header.weights, env=env, synthetic=label)
               for r in llamacpp.probe(path, o, sampler=factory)]
    measurements: tuple = ()
    if request.compare and folder is not None:
        same = replace(synthetic_shape(), layers=header.shape.n_layer if header.shape else synthetic_shape().layers)
        measurements = tuple(engine_gap.measure_others(folder, same, "llama.cpp", lambda t: _say(on_event, "compare", t)))
    return _wrap("llama.cpp", results[-1], label, llamacpp=tuple(results), measurements=measurements)


def _transformers(report: Report, request: EngineRequest, folder: str | None, factory: Callable,
                  on_event: Sink | None) -> ProbeReport:
    from doctor.probe import engine_gap  # lazy: the probe loads when it runs
    from doctor.probe.transformers import TransformersOptions, run_child, synthetic_model  # lazy: as the probe

    plan = report.plan
    o = TransformersOptions(prompt=request.prompt, warmup=min(request.warmup, 256), tokens=request.tokens,
                            runs=max(request.runs, 3), gpu_index=plan.gpu_index)
    label = ""
    if folder is not None:
        layers = request.synthetic_layers or TRANSFORMERS_LAYERS
        _say(on_event, "build", f"writing a random-weight FP16 Llama of the 27B layer shape ({layers} layers) ...")
        built = synthetic_model(os.path.join(folder, "synthetic-fp16"), layers, synthetic_shape())
        path, shape, label = built.path, built.shape, built.label + ", NF4 as bitsandbytes loads it"
    else:
        path, shape = plan.model_path or "", None
    _say(on_event, "decode", f"probing {path} with Transformers (generate(), {o.quant}) ...")
    t = replace(run_child(path, o, sampler=factory), synthetic=label)
    others: tuple = ()
    if request.compare:  # the other engines on the same layer shape (a synthetic model of the user's model's shape)
        try:
            shape = shape or engine_gap.shape_of(path)
        except (KeyError, ValueError, OSError) as exc:  # a config.json without the decoder's dimensions
            _say(on_event, "compare", f"the other engines were not measured: {path}'s config.json lacks {exc}")
            shape = None
        scratch = folder or tempfile.mkdtemp(prefix="v100-doctor-engine-")
        try:
            if shape is not None:
                others = tuple(engine_gap.measure_others(scratch, shape, "transformers",
                                                         lambda s: _say(on_event, "compare", s)))
        finally:
            if folder is None:
                shutil.rmtree(scratch, ignore_errors=True)
    return _wrap("transformers", t, label, transformers=t, measurements=others)


SERVED = {  # engines that run inside their own server: measured through it, given its URL (--engine-url)
    "ollama": "Ollama runs its own llama.cpp build inside its server: give its URL (--engine-url "
              "http://127.0.0.1:11434) and the doctor times it through Ollama's API; llama-cpp-python's build is not "
              "Ollama's, so no stand-in figure is given",
    "vllm": "vLLM is measured through its OpenAI-compatible server: give its URL (--engine-url http://127.0.0.1:8000) "
            "and the doctor times it; no other engine's figure stands in for it",
}


def _server(report: Report, request: EngineRequest, kept: list, on_event: Sink | None) -> ProbeReport:
    """A running engine server (--engine-url), timed through its own API; NVML sampled when it is on this host."""
    from doctor.probe.served.timing import ServerOptions, time_server  # lazy: the HTTP client loads with the probe

    server = report.plan.engine_server
    assert server is not None
    o = ServerOptions(tokens=request.tokens, runs=max(request.runs, 3), gpu_index=report.plan.gpu_index)
    sampler = keeping_sampler(kept) if request.sampling else None
    sp = time_server(server, o, sampler, lambda text: _say(on_event, "decode", text))
    engine = str(server.engine) if server.engine is not None else "server"  # not identified: no engine to name
    if sp.outcome == "ok" and sp.median_tok_s:
        summary = (f"{sp.median_tok_s:g} tok/s decode ({sp.backend} at {sp.url}, {sp.model}, median of "
                   f"{len(sp.runs) - sp.dropped_runs} runs, spread {sp.spread_pct}%)")
    else:
        summary = sp.error or f"{sp.backend}: {sp.outcome}"
    status = "ok" if sp.outcome == "ok" else "timeout" if sp.outcome == "timeout" else "failed"
    return ProbeReport(status=status, summary=summary, engine=engine, server=sp, model_path=sp.model_path)


def _served(report: Report, engine: str) -> ProbeReport:
    return ProbeReport(status="skipped", engine=engine, model_path=report.plan.model_path or "", summary=SERVED[engine])


def with_engine_probe(report: Report, probe: ProbeReport) -> Report:
    """The engine's probe into the report: its verdict (today's, on a replay too) and its finding."""
    verdict = engine_probe.judge(probe, report.facts, report.plan)
    timings = {**report.timings_ms, "probe_ms": round(probe.seconds * 1000, 1)}
    return replace(report, probe=probe, engine_verdict=verdict, timings_ms=timings,
                   findings=merge_findings(report.findings, engine_probe.findings(probe, verdict, probe.asked)))

