"""An engine's own probe (llama.cpp, Transformers, an engine server) judged inside the one Run: its verdict from the
recorded measurements, this card's datasheet row and the plan, and the findings it puts in the report. A replay of
the report calls the same function on the same recorded probe, so it reaches the same verdict and exit code.

The verdict per engine is doctor/verdict/llamacpp.py and transformers.py; this module picks the card, flags a spread
the extra runs did not settle, and says what was not run and why (Unknown with its reason, never a figure).
"""

from __future__ import annotations

from dataclasses import replace

from doctor.knowledge.arithmetic.gguf_budget import quant_weights
from doctor.knowledge.gpus import GpuSpec, spec_for_key, spec_for_name
from doctor.model.engine_probe import LlamaCppProbe, ServerProbe, TransformersProbe
from doctor.model.engine_verdict import EngineVerdict
from doctor.model.facts import Facts
from doctor.model.findings import Finding, Status
from doctor.model.ids import CauseId, CheckId, Engine
from doctor.model.plan import Plan
from doctor.model.probe_results import ProbeReport
from doctor.model.unknown import known
from doctor.verdict import llamacpp, served, transformers
from doctor.verdict.build import DECODE_SPEED_TITLE
from doctor.verdict.speed_rule import decode_speed_status, rule_evidence

FLAG_SPREAD_PCT = 10.0  # runs further apart than this are flagged: the median is that uncertain
ENGINE_NAMES = {"llama.cpp": "llama.cpp", "ollama": "Ollama (llama.cpp)", "transformers": "Transformers",
                "vllm": "vLLM"}
INSTALL = {  # what makes the probe runnable; each command is the engine's own documented install
    "llama.cpp": ('CMAKE_ARGS="-DGGML_CUDA=on" pip install llama-cpp-python',
                  "https://github.com/abetlen/llama-cpp-python#installation"),
    "transformers": ("pip install transformers accelerate bitsandbytes",
                     "https://huggingface.co/docs/transformers/main/en/quantization/bitsandbytes"),
}


def probe_title(engine: str, server: ServerProbe | None = None) -> str:
    if server is not None:
        return f"Timed {served._name(server) if server.flavour else 'engine'} server"
    return f"Timed {ENGINE_NAMES.get(engine, engine)} probe"


def card_of(facts: Facts, plan: Plan) -> tuple[GpuSpec | None, str | None]:
    """This card's datasheet row and compute capability, from the report's own facts (live or recorded)."""
    gpu = facts.gpu(plan.gpu_index)
    if gpu is None or not known(gpu.name):
        return None, None
    spec = spec_for_name(gpu.name, gpu.memory_total_mib if known(gpu.memory_total_mib) else None)
    cc = gpu.compute_capability if known(gpu.compute_capability) else (spec.cc if spec else None)
    return spec, cc


def judge(probe: ProbeReport, facts: Facts, plan: Plan) -> EngineVerdict:
    """The verdict of an engine's probe: the engine's own attribution on this card, the spread flagged."""
    if probe.server is not None:
        return _served(probe, probe.server, facts, plan)
    spec, cc = card_of(facts, plan)
    if probe.status == "skipped" or not (probe.llamacpp or probe.transformers):
        return EngineVerdict("not-run", f"not measured: {probe.summary}", engine=probe.engine)
    if spec is None or not cc:
        why = "no datasheet row for this card" if cc else "the card's compute capability is unknown"
        v = _unjudged(probe, f"no ceiling to compare with ({why})")
    elif probe.llamacpp:
        lp = probe.llamacpp[-1]
        v = _llamacpp(lp, spec, cc, probe) if lp.shape is not None else _unjudged(
            probe, "the GGUF's header was not read, so no ceiling")
    else:
        assert probe.transformers is not None
        v = transformers.attribute(probe.transformers, spec.bandwidth_gbs, cc, spec.fp16_slow, probe.measurements)
    return replace(v, engine=probe.engine, unsettled=unsettled(v.spread_pct, _runs(probe)))


def _served(probe: ProbeReport, sp: ServerProbe, facts: Facts, plan: Plan) -> EngineVerdict:
    """A running server: this host's card when the server is on it, else the --target-gpu card, else no ceiling."""
    why = ""
    if sp.local and not plan.target_gpu:
        spec, cc = card_of(facts, plan)
    else:
        spec = spec_for_key(plan.target_gpu) if plan.target_gpu else None
        cc = spec.cc if spec is not None else None
        if spec is None:
            why = "the server is not on this host; give --target-gpu CARD (its card) to judge it against that ceiling"
    engine = plan.engine_server.engine if plan.engine_server is not None else None
    model = facts.model
    weights = None
    if model is not None and model.gguf is not None and model.gguf.weights is not None:
        weights = model.gguf.weights.total_bytes
    v = served.attribute(sp, Engine(engine) if engine else None, spec.bandwidth_gbs if spec else None, cc,
                         spec.fp16_slow if spec else False, weights, why)
    return replace(v, unsettled=unsettled(v.spread_pct, _runs(probe)))


def _llamacpp(lp: LlamaCppProbe, spec: GpuSpec, cc: str, probe: ProbeReport) -> EngineVerdict:
    assert lp.shape is not None
    weights = lp.weights or quant_weights(lp.shape, "Q4_K_M")
    return llamacpp.attribute(lp, lp.shape, weights, spec.bandwidth_gbs, cc, lp.env, spec.fp16_slow, probe.measurements)


def _unjudged(probe: ProbeReport, why: str) -> EngineVerdict:
    measured = engine_result(probe)
    tok_s = measured.median_tok_s if measured is not None else None
    if measured is None or measured.outcome != "ok" or not tok_s:
        return EngineVerdict(measured.outcome if measured else "error", probe.summary, engine=probe.engine)
    return EngineVerdict("ok", f"{tok_s:g} tok/s measured; {why}", measured_tok_s=tok_s,
                         spread_pct=measured.spread_pct, engine=probe.engine)


def engine_result(probe: ProbeReport) -> LlamaCppProbe | TransformersProbe | ServerProbe | None:
    """The engine measurement the verdict speaks for: the last llama.cpp way in, Transformers', or a server's."""
    return probe.llamacpp[-1] if probe.llamacpp else probe.transformers or probe.server


def _runs(probe: ProbeReport) -> tuple[int, int]:
    """(runs made, runs asked for)."""
    m = engine_result(probe)
    return (len(m.runs), m.asked_runs or len(m.runs)) if m is not None else (0, 0)


def unsettled(spread_pct: float | None, runs: tuple[int, int]) -> str:
    """A spread over the flag line, with the runs it took: the ExLlamaV2 probe's answer (more runs) was given first."""
    if spread_pct is None or spread_pct <= FLAG_SPREAD_PCT:
        return ""
    made, asked = runs
    more = (f"after {made - asked} more runs than the {asked} asked for" if made > asked
            else f"over {made} runs")
    return (f"the runs spread {spread_pct:.0f}% {more} (flagged above {FLAG_SPREAD_PCT:g}%): the median is uncertain "
            "by about half that; something else shared the card or the host, or the engine had not settled")


def outcome_status(outcome: str) -> str:
    """An engine probe's outcome as the ProbeReport status every face knows."""
    return {"ok": "ok", "timeout": "timeout", "died-silently": "crashed", "not-installed": "skipped",
            "not-run": "skipped", "cancelled": "cancelled"}.get(outcome, "failed")


def findings(probe: ProbeReport, verdict: EngineVerdict, asked: bool) -> list[Finding]:
    """The probe's line in the findings: its speed against the ceiling, or why it did not measure."""
    sp = probe.server
    name = served._name(sp) if sp is not None else ENGINE_NAMES.get(probe.engine, probe.engine)
    m = engine_result(probe)
    if verdict.outcome != "ok" or not verdict.measured_tok_s:
        not_run = verdict.outcome in ("not-installed", "not-run")
        install = INSTALL.get("llama.cpp" if probe.engine == "ollama" else probe.engine)
        failed: dict[str, object] = {"engine": probe.engine, "outcome": verdict.outcome, "reason": probe.summary}
        if m is not None and m.log_tail:
            failed["log_tail"] = m.log_tail[-1500:]
        fix = ""
        commands: tuple[str, ...] = ()
        if verdict.outcome == "not-installed" and install:
            fix, commands = f"Install {name} with CUDA ({install[1]}), then run the same command.", (install[0],)
        if sp is not None:  # a server that could not be asked is the user's input to fix (exit 3), said in one line
            failed.update(url=sp.url, flavour=sp.flavour, model=sp.model or None)
            if sp.input_error:
                failed["input_error"] = sp.error
        status = Status.SKIP if not_run and not asked else Status.FAIL
        return [Finding(id=CheckId.PROBE, title=probe_title(probe.engine, sp), status=status,
                        summary=(f"not run: {probe.summary}" if not_run else verdict.summary), evidence=failed, fix=fix,
                        commands=commands)]
    offload = any(c.get("cause") == CauseId.CPU_OFFLOAD.value for c in verdict.causes)
    status = decode_speed_status(verdict.efficiency, verdict.expected_efficiency, unsettled=bool(verdict.unsettled),
                                 offloaded=offload)
    ev: dict[str, object] = {"engine": probe.engine, "measured_tok_s": verdict.measured_tok_s, "ceiling_tok_s": verdict.ceiling_tok_s,
          "efficiency": verdict.efficiency, "spread_pct": verdict.spread_pct,
          **rule_evidence(verdict.expected_efficiency, verdict.expected_source)}
    if m is not None:
        ev.update(gpu_util_pct=m.gpu_util_pct, gpu_sm_clock_mhz=m.gpu_sm_clock_mhz, gpu_samples=m.gpu_samples,
                  gpu_decode_samples=m.gpu_decode_samples, runs=len(m.runs), asked_runs=m.asked_runs)
    if sp is not None:
        ev.update(url=sp.url, flavour=sp.flavour, model=sp.model, clock=sp.clock, on_this_host=sp.local,
                  vram_bytes=sp.vram_bytes, resident_bytes=sp.resident_bytes, n_ctx=sp.n_ctx)
        if not sp.local:
            ev["gpu_samples"] = None  # another host's card: nothing of it was sampled here
    summary = f"{name}: {verdict.summary}" + (f"; {verdict.unsettled}" if verdict.unsettled else "")
    fix = next((c["fix"] for c in verdict.causes if c.get("fix")), "")
    return [Finding(id=CheckId.DECODE_SPEED, title=DECODE_SPEED_TITLE, status=status,
                    summary=summary, evidence=ev, fix=fix)]
