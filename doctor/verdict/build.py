"""The verdict: measured decode speed against this card's ceiling, and which pitfall explains the gap.

Data model (Report.verdict; stable for the TUI and for --json readers):
  measured_tok_s, spread_pct        the probe's reported median and its run-to-run spread
  bytes                             what one decoded token reads: weights on the GPU, KV at the probe's context
  datasheet, measured               Ceiling(bandwidth_gbs, tok_s at the probe's context, tok_s_weights_only)
  ceiling_tok_s, efficiency         the datasheet ceiling at the probe's context, and measured ÷ it
  near_ceiling                      efficiency >= 0.90 (the reference V100's 64 / 70.9 tok/s)
  lost_ms_per_token                 measured time per token - weights ÷ bandwidth (the zero-context ideal)
  causes                            ranked Cause(id, title, lost_ms, share of the gap, evidence, sentence),
                                    always ending with "unexplained" (what no evidence accounts for)
  headline                          the top cause in one sentence, with numbers
  fixes                             Fix(action, expected_gain_tok_s, basis), ranked by expected gain
  set_aside                         probe passes not reported as the card's speed, and why
  reference                         on a V100-class card: how far from the reference 64 tok/s, and why
Shares are estimates from the evidence (each cause says which); the figures they rest on were
measured by the probe unless the evidence says otherwise.
"""

from __future__ import annotations

import shlex
from dataclasses import replace

from doctor.knowledge.arithmetic.decode_bytes import ceiling_tok_s, kv_read_bytes, read_ms
from doctor.knowledge.engine_efficiency import expected_share, family
from doctor.knowledge.engines import CUDNN_SDPA_PER_LENGTH
from doctor.knowledge.gpus import GpuSpec, spec_for_key, spec_for_name
from doctor.knowledge.kv_cache import KV_CACHE_MODES
from doctor.model.facts import Facts
from doctor.model.findings import Finding
from doctor.model.ids import CauseId, CheckId
from doctor.model.plan import Plan
from doctor.model.probe_results import ProbeReport, ProbeResult
from doctor.model.reference import SEED_REFERENCE
from doctor.model.units import GB, gb
from doctor.model.unknown import known
from doctor.model.verdict import BytesPerToken, Cause, Ceiling, Fix, MissingEvidence, NoCeiling, Verdict
from doctor.probe.hoststate import pace_shift
from doctor.verdict.causes import MIN_SAMPLES, Inputs, estimate
from doctor.verdict.evidence import DecodeEvidence, decode_evidence
from doctor.verdict.speed_rule import decode_speed_status, rule_evidence

NEAR_CEILING = 0.90  # the reference V100: 64.05 / 70.9 tok/s = 0.903
BPW_STEP = 0.5  # the reference story's step, 4.25 -> 3.75 bpw
DECODE_SPEED_TITLE = "Measured decode speed vs this card's ceiling"  # the decode-speed finding, with or without a ceiling
MOSTLY_UNEXPLAINED = 0.5  # above this share of the gap, the verdict names the evidence it lacks


def gpu_spec(result: ProbeResult, facts: Facts | None, plan: Plan | None) -> GpuSpec | None:
    g = facts.gpu(plan.gpu_index if plan else 0) if facts is not None else None
    mem = g.memory_total_mib if g is not None and known(g.memory_total_mib) else None
    spec = spec_for_name(result.device_name, mem)
    if spec is None and g is not None and known(g.name):
        spec = spec_for_name(g.name, mem)
    return spec


def bytes_per_token(result: ProbeResult) -> BytesPerToken:
    s, m = result.shape, result.memory
    mode = KV_CACHE_MODES.get(result.cache_mode, KV_CACHE_MODES["fp16"])
    context = result.context_tokens
    kv = kv_read_bytes(s.layers, s.kv_heads, s.head_dim, context, mode.key)
    return BytesPerToken(weights=float(m.weight_bytes_gpu + 2 * s.hidden_size), kv_read=float(kv),
                         offloaded=float(m.offloaded_bytes), context=context, cache_mode=result.cache_mode,
                         source=("weights: ExLlamaV2's own footprint of the modules it put on the GPU; KV: "
                                 f"{s.layers} layers x {context:,} tokens x {mode.decode_read_per_past_token_layer(s.kv_heads, s.head_dim):,} "
                                 f"bytes ({mode.key}, {mode.source.split(' (')[0]})"))


def _ceiling(gbs: float, b: BytesPerToken, source: str) -> Ceiling:
    return Ceiling(bandwidth_gbs=gbs, tok_s=round(ceiling_tok_s(b.weights + b.kv_read, gbs), 2),
                   tok_s_weights_only=round(ceiling_tok_s(b.weights, gbs), 2), source=source)


def build_verdict(probe: ProbeReport, facts: Facts | None = None, plan: Plan | None = None) -> Verdict:
    r = probe.result
    if r is None:
        raise ValueError("a verdict needs a probe that measured something")
    spec = gpu_spec(r, facts, plan)
    b = bytes_per_token(r)
    datasheet = _ceiling(spec.bandwidth_gbs, b, f"{spec.name} datasheet, {spec.source.split(' ; ')[0]} [{spec.confidence}]") if spec else None
    measured = _ceiling(r.bandwidth.gbs, b, "device-to-device copy on this card (read + write)") if r.bandwidth else None
    ref = datasheet or measured
    notes: list[str] = []
    if ref is None:
        raise NoCeiling(f"{r.device_name} is not in the knowledge base and its bandwidth was not measured "
                        "(run the probe without --no-bandwidth)")
    if datasheet is None:
        notes.append(f"{r.device_name} is not in the knowledge base; the ceiling uses the measured copy bandwidth")
    tok_s = r.decode_tok_s
    t_meas = 1000.0 / tok_s if tok_s > 0 else float("inf")
    t_w = read_ms(b.weights, ref.bandwidth_gbs)
    t_kv = read_ms(b.kv_read, ref.bandwidth_gbs)
    lost = max(0.0, t_meas - t_w)
    ev = decode_evidence(probe, plan.gpu_index if plan else 0)
    if ev.samples == 0:
        notes.append("no GPU samples during decode: utilisation, clocks and PCIe are unknown, so host-bound, throttling "
                     "and offload cannot be estimated")
    elif ev.samples < MIN_SAMPLES:
        notes.append(f"only {ev.samples} GPU sample(s) fell inside the timed runs (they took "
                     f"{sum(x.seconds for x in r.reported.runs):.2f} s): utilisation is not judged from so few")
    x = Inputs(t_meas_ms=t_meas, t_weights_ms=t_w, t_kv_ms=t_kv, bandwidth_gbs=ref.bandwidth_gbs, weights_bytes=b.weights,
               kv_bytes=b.kv_read, offloaded_bytes=b.offloaded, context=b.context, cache_mode=b.cache_mode,
               engine=r.engine, fmt=r.shape.format, act_order=r.shape.act_order if known(r.shape.act_order) else None,
               evidence=ev)
    causes = _shares(estimate(x), lost, notes)
    efficiency = tok_s / ref.tok_s if ref.tok_s else 0.0
    near = efficiency >= NEAR_CEILING
    first_use, first_fix = _first_use(r)
    fixes = tuple(sorted((f for f in _fixes(causes, x, r, tok_s) + ((first_fix,) if first_fix else ())
                          if f.expected_gain_tok_s is None or f.expected_gain_tok_s >= 0.01 * tok_s),  # not noise
                         key=lambda f: -(f.expected_gain_tok_s if f.expected_gain_tok_s is not None else -1)))
    options: tuple[Fix, ...] = ()
    if near:  # at the card's limit nothing is broken: the levers trade something, so they are options, not a fix
        options, fixes = _levers(fixes), tuple(f for f in fixes if f.cause == "first-use")
    verdict = Verdict(measured_tok_s=round(tok_s, 2), spread_pct=round(r.reported.spread_pct, 2), bytes=b,
                      datasheet=datasheet, measured=measured, ceiling_tok_s=ref.tok_s, efficiency=round(efficiency, 4),
                      near_ceiling=near, lost_ms_per_token=round(lost, 3), causes=causes, headline="",
                      fixes=fixes, set_aside=_set_aside(r), first_use=first_use, notes=tuple(notes),
                      unsettled=r.reported.unsettled, shifted=pace_shift(r.reported),
                      gpu=spec.name if spec else r.device_name, options=options)
    if not near and verdict.unexplained > MOSTLY_UNEXPLAINED:
        verdict = replace(verdict, missing_evidence=_missing(r, ev))
    said = headline(verdict) + (f" {verdict.shifted}" if verdict.shifted else "")
    return replace(verdict, headline=said, reference=reference_line(verdict, spec, plan))


def _shares(causes: list[Cause], lost: float, notes: list[str]) -> tuple[Cause, ...]:
    claimed = sum(c.lost_ms for c in causes if c.lost_ms)
    scale = 1.0
    if lost > 0 and claimed > lost:
        scale = lost / claimed
        notes.append(f"the causes' estimates overlap ({claimed:.2f} ms claimed for a {lost:.2f} ms gap); "
                     "they are scaled down to the gap")
    out = []
    for c in causes:
        ms = c.lost_ms * scale if c.lost_ms is not None else None
        share = (ms / lost if lost > 0 else 0.0) if ms is not None else None
        out.append(replace(c, lost_ms=round(ms, 3) if ms is not None else None,
                           share=round(share, 4) if share is not None else None))
    unexplained = max(0.0, lost - sum(c.lost_ms for c in out if c.lost_ms))
    out.sort(key=lambda c: -(c.share or 0))
    out.append(Cause(CauseId.UNEXPLAINED, "not explained by the evidence", round(unexplained, 3),
                     round(unexplained / lost, 4) if lost > 0 else 0.0,
                     sentence="no measured cause accounts for it"))
    return tuple(out)


def _fixes(causes: tuple[Cause, ...], x: Inputs, r: ProbeResult, tok_s: float) -> tuple[Fix, ...]:
    def gain(saved_ms: float) -> float:
        return round(1000.0 / max(x.t_meas_ms - saved_ms, 1e-6) - tok_s, 2)

    out: list[Fix] = []
    for c in causes:
        if c.id == CauseId.KV_READS and c.lost_ms:
            out.append(Fix(c.id, f"halve the context the model decodes at (now {x.context:,} tokens)" +
                           (" and keep the FP16 cache: ExLlamaV2's quantized caches dequantize the whole past every "
                            "step, reading more per token, not less" if x.cache_mode == "fp16" else
                            "; a quantized cache saves memory but reads more per token than FP16"),
                           gain(c.lost_ms / 2), "half of the KV read time"))
        elif c.id == CauseId.THROTTLED_CLOCKS and c.lost_ms:
            out.append(Fix(c.id, "restore full clocks under load: cooling, airflow, the power limit (nvidia-smi -q -d PERFORMANCE)",
                           gain(c.lost_ms), "the time the lower clocks add"))
        elif c.id == CauseId.CPU_OFFLOAD and c.lost_ms:
            out.append(Fix(c.id, "keep every weight in VRAM: lower max_seq_len or bpw until the model fits, no CPU offload",
                           gain(c.lost_ms), "the PCIe time per token"))
        elif c.id == CauseId.HOST_BOUND and c.lost_ms:
            out.append(Fix(c.id, "make each token cheaper on the host: a faster CPU core (no frequency scaling, no "
                           "oversubscribed VM), the quantized EXL2/GPTQ path (CUDA graphs) rather than FP16 layers",
                           gain(c.lost_ms), "upper bound: all the time the GPU sat idle"))
        elif c.id == CauseId.LAUNCH_BOUND and c.lost_ms:
            out.append(Fix(c.id, "nothing in the settings: a per-token floor of small kernels and launches. Keep the layers "
                           "quantized (EXL2/GPTQ run CUDA graphs, FP16 layers do not); a larger model, or more streams "
                           "at once, uses the card's bandwidth better", None, "not estimable: it is the engine's floor here"))
        elif c.id == CauseId.KERNEL_PATH and c.lost_ms:
            out.append(Fix(c.id, "switch to ExLlamaV2 with an EXL2 model (its fused kernels read each weight once)",
                           gain(c.lost_ms), str(c.evidence.get("source", ""))))
        elif c.id == CauseId.GPU_CONTENTION:
            out.append(Fix(c.id, "stop the other processes on this GPU during inference: " + ", ".join(c.evidence["processes"]),
                           None, "not estimable: NVML does not say how much bandwidth they used"))
    bpw = r.shape.bpw if known(r.shape.bpw) else None
    if r.shape.format == "exl2" and bpw and bpw - BPW_STEP >= 2.5:
        lower = bpw - BPW_STEP
        saved = x.weights_bytes * 0.97 * (1 - lower / bpw)  # the LM head and norms stay as they are (~3%)
        out.append(Fix("bpw", f"use {lower:g} bpw instead of {bpw:g} (the reference story's 4.25 -> 3.75 step): "
                       f"{gb(saved, 2)} less read per token", gain(read_ms(saved, x.bandwidth_gbs)),
                       "the weights' bandwidth time scales with bpw; quality drops a little"))
    return tuple(sorted(out, key=lambda f: -(f.expected_gain_tok_s if f.expected_gain_tok_s is not None else -1)))


def _levers(fixes: tuple[Fix, ...]) -> tuple[Fix, ...]:
    """The remaining levers at the card's limit, each with what it trades."""
    trade = {"bpw": "; trades a little quality for speed", CauseId.KV_READS: "; trades the context the model can use"}
    kept = [replace(f, action=f.action + trade.get(f.cause, "")) for f in fixes if f.cause != "first-use"]
    return tuple(kept) + (
        Fix("batching", "serve several requests at once (ExLlamaV2's dynamic generator batches them): raises the "
            "total tokens per second, not the speed of one stream", None, "each token's weights are read once for the whole batch"),
        Fix("speculative-decoding", "speculative decoding with a small draft model of the same family (ExLlamaV2 "
            "supports a draft model): more than one token per weight read on predictable text; costs the draft's VRAM",
            None, "gain depends on how often the draft is accepted"),
    )


def _missing(r: ProbeResult, ev: DecodeEvidence) -> tuple[MissingEvidence, ...]:
    """Which evidence would explain the gap, and the exact probe command that records it."""
    cmd = (f"v100-doctor probe --model {shlex.quote(r.model_path)} --max-seq-len {r.max_seq_len} "
           f"--cache-mode {r.cache_mode} --json -o probe.json")
    out = []
    if ev.samples < MIN_SAMPLES:
        out.append(MissingEvidence("GPU samples during decode (utilisation, clocks and throttle reasons, PCIe traffic): "
                                   "they tell host-bound, throttling and CPU offload apart", cmd))
    if ev.cpu_wall is None:
        out.append(MissingEvidence("host counters of the timed runs (CPU time per wall second, page faults per token): "
                                   "they show a host-bound loop", cmd))
    if r.bandwidth is None:
        out.append(MissingEvidence("this card's measured copy bandwidth: a card below its datasheet lowers the ceiling", cmd))
    if not out:
        out.append(MissingEvidence("a longer sampled run (the recorded samples explain too little of the gap)",
                                   cmd.replace(" --json", " --runs 5 --json")))
    return tuple(out)


def _first_use(r: ProbeResult) -> tuple[str, Fix | None]:
    """The warm-up met each context length for the first time and was far slower than the runs: name it, with
    what a fresh generation (every token a new length) pays, and the fix where the mechanism is known."""
    p = next((q for q in r.passes if q.first_use), None)
    if p is None:
        return "", None
    text = (f"fresh generations are slower than the measured speed: {p.first_use}. The reported speed is for lengths "
            "already met; a new generation meets a new length every token")
    cudnn = r.attention == "torch SDPA" and r.compute_capability.split(".")[0] in ("9", "10")
    if cudnn:
        trap = CUDNN_SDPA_PER_LENGTH
        text += f". Cause (measured on an H200): {trap.what}"
        action, basis = f"stop the per-length graph builds: {trap.fix}", f"{trap.measured} [{trap.source}]"
    else:
        action = "find what costs host time at each new context length (the page-fault rate says it allocates memory)"
        basis = "the warm-up's own counters; the mechanism is unknown on this stack"
    if p.fix_tok_s:  # measured in the probe: fresh lengths with the fix applied, not the runs' speed
        return text, Fix("first-use", action + f" (a fresh generation runs at {p.warmup_tok_s:.1f} tok/s now, "
                         f"{p.fix_tok_s:.1f} tok/s with the fix)", round(p.fix_tok_s - p.warmup_tok_s, 2),
                         f"measured: {FIX_TOKENS_NOTE} at lengths never met, with {p.fix_what}")
    return text, Fix("first-use", action + f" (a fresh generation runs at {p.warmup_tok_s:.1f} tok/s now)",
                     None, basis + "; the fix's speed was not measured in this probe")


FIX_TOKENS_NOTE = "64 decode steps"


def _set_aside(r: ProbeResult) -> tuple[str, ...]:
    return tuple(f"load {p.index}: {p.median_tok_s:.1f} tok/s set aside, not this card's speed: {p.flag}"
                 for p in r.passes if p.flag and p.index != r.reported_pass)


def headline(v: Verdict) -> str:
    ceiling = v.datasheet or v.measured
    assert ceiling is not None  # build() raises NoCeiling without one
    frame = (f"{v.measured_tok_s:.1f} tok/s is {v.efficiency:.0%} of this card's {v.ceiling_tok_s:.1f} tok/s ceiling "
             f"({ceiling.bandwidth_gbs:,.0f} GB/s ÷ {gb(v.bytes.total, 2)} per token: the weights plus the KV read "
             f"at {v.bytes.context:,} tokens)")
    if v.unsettled:
        return f"{v.unsettled} The median ({v.measured_tok_s:.1f} tok/s) is therefore not this card's speed. ({frame}.)"
    top = v.top_cause
    if v.near_ceiling:
        return (frame + ": this setup is at the card's limit. Nothing needs fixing; the remaining levers are options "
                "with a trade-off (a lower bpw trades quality, batching raises total throughput, speculative decoding).")
    if top is None or (top.share or 0.0) < 0.05:  # top_cause has a share
        best = next((f for f in v.fixes if f.expected_gain_tok_s), None)
        return (frame + f"; {v.unexplained:.0%} of the gap is not explained by the evidence recorded"
                + (f" (missing: {v.missing_evidence[0].what.split(' (')[0]}; the command that collects it is below)"
                   if v.missing_evidence else "")
                + (f". The largest fix the evidence supports: {best.action.split(':')[0]} (+{best.expected_gain_tok_s:.1f} "
                   "tok/s expected)." if best else "."))
    rest = f"; {v.unexplained:.0%} stays unexplained" if v.unexplained >= 0.3 else ""
    return (f"{top.share:.0%} of the gap to the ceiling is {top.title}: {top.sentence}{rest}. "
            f"({frame}.)")


def reference_line(v: Verdict, spec: GpuSpec | None, plan: Plan | None) -> str:
    """For a V100-class card: how far from the reference story's 64 tok/s, and why."""
    target = spec_for_key(plan.target_gpu) if plan and plan.target_gpu else spec
    if target is None or not target.key.startswith(("v100", "titan-v")):
        return ""
    ref_tok, ref_gb = SEED_REFERENCE["measured_tok_s"], SEED_REFERENCE["weights_gb"]
    per_token_gb = v.bytes.total / GB
    diff = v.measured_tok_s - ref_tok
    if diff >= 0:
        return f"{v.measured_tok_s:.1f} tok/s is at or above the reference V100's {ref_tok:g} tok/s ({ref_gb:g} GB per token at 3.75 bpw)."
    why = (f"this setup reads {gb(v.bytes.total)} per token against the reference's {ref_gb:g} GB, so its ceiling is "
           f"{v.ceiling_tok_s:.1f} rather than {SEED_REFERENCE['ceiling_tok_s']:g} tok/s" if abs(per_token_gb - ref_gb) > 0.5 else "")
    top = v.top_cause
    if top is not None and (top.share or 0.0) >= 0.05 and not v.near_ceiling:
        why = (why + "; and " if why else "") + f"{top.share:.0%} of the rest is {top.title}"
    return f"{-diff:.1f} tok/s short of the reference V100's {ref_tok:g} tok/s" + (f": {why}." if why else ".")


def expected_share_of(result: ProbeResult, facts: Facts | None = None, plan: Plan | None = None) -> tuple[float, str]:
    """(share of the ceiling, source) ExLlamaV2 reaches on this card's architecture: the bar speed_rule grades by."""
    spec = gpu_spec(result, facts, plan)
    cc = result.compute_capability or (spec.cc if spec else "")
    share, confidence, source = expected_share("exllamav2", family(cc, spec.fp16_slow if spec else False))
    return share, f"{source} [{confidence}]"


def verdict_finding(v: Verdict, expected: tuple[float, str] | None) -> Finding:
    """The probe's outcome as one line in the findings list (the verdict itself is the section below it), graded by
    the one rule every engine's speed is graded by (doctor/verdict/speed_rule.py), synthetic model or not."""
    offloaded = any(c.id == CauseId.CPU_OFFLOAD and c.lost_ms for c in v.causes)
    share, source = expected if expected is not None else (None, "")
    status = decode_speed_status(v.efficiency, share, unsettled=bool(v.unsettled), offloaded=offloaded)
    top_fix = v.fixes[0] if v.fixes else None
    return Finding(id=CheckId.DECODE_SPEED, title=DECODE_SPEED_TITLE, status=status,
                   summary=v.headline,
                   evidence={"measured_tok_s": v.measured_tok_s, "ceiling_tok_s": v.ceiling_tok_s,
                             "efficiency": v.efficiency, "bytes_per_token_gb": round(v.bytes.total / GB, 3),
                             "top_cause": v.top_cause.id if v.top_cause else "none", **rule_evidence(share, source)},
                   fix=(f"{top_fix.action} (expected +{top_fix.expected_gain_tok_s:.1f} tok/s)"
                        if top_fix and top_fix.expected_gain_tok_s else (top_fix.action if top_fix else "")))
