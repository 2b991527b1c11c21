"""The probe's measurements and the verdict as text lines, shared by the text and Markdown renderers."""

from __future__ import annotations

from doctor.model.engine_probe import LlamaCppProbe, ServerProbe
from doctor.model.engine_verdict import EngineVerdict
from doctor.model.probe_results import ProbeReport
from doctor.model.report import Report
from doctor.model.units import MIB, gb
from doctor.model.verdict import Verdict
from doctor.render.common import WIDTH
from doctor.render.common import wrap as _wrap


def engine_probe_lines(probe: ProbeReport, verbose: bool = False, width: int = WIDTH) -> list[str]:
    """An engine's own probe (llama.cpp, Transformers, a server): what ran, each way in, the NVML summary."""
    sp = probe.server
    what = f"{sp.model or 'its model'} on the server at {sp.url}" if sp is not None else \
        probe.synthetic or probe.model_path or "model"
    lines = _wrap(f"Probe ({probe.engine}): {what}", "", "  ", width)
    measured = list(probe.llamacpp) + [m for m in (probe.transformers, sp) if m is not None]
    if not measured:
        return lines + _wrap(f"not measured: {probe.summary}", "  ", "    ", width)
    for m in measured:
        if m.outcome == "ok" and m.median_tok_s:
            kept = len(m.runs) - m.dropped_runs
            more = f", {len(m.runs) - m.asked_runs} more runs while they spread" if m.asked_runs and len(m.runs) > m.asked_runs else ""
            clock = f"; probe clock vs the engine's own {m.wall_vs_perf_pct:+.2f}%" if m.wall_vs_perf_pct is not None else ""
            lines += _wrap(f"decode {m.median_tok_s:g} tok/s ({m.backend}, median of {kept} x "
                           f"{m.runs[-1].tokens if m.runs else 0} tokens, spread {m.spread_pct}%{more}){clock}",
                           "  ", "    ", width)
        else:
            lines += _wrap(f"{m.backend}: {m.outcome}: {m.error}", "  ", "    ", width)
        if isinstance(m, LlamaCppProbe):
            setup = f"ctx {m.n_ctx}, flash attention {m.flash_attn}, K/V {m.cache_type_k}/{m.cache_type_v}"
            lines += _wrap(setup + (f", {m.offloaded}" if m.offloaded else ""), "  ", "    ", width)
        elif isinstance(m, ServerProbe):
            lines += _wrap(_server_setup(m), "  ", "    ", width)
        else:
            lines += _wrap(f"{m.timing} timed, {m.quant or '?'} weights, {m.layers} layers, "
                           f"{(m.bytes_per_token or 0) / 1e9:.2f} GB read per token"
                           + (f"; warm-up {m.warmup_tok_s:g} tok/s" if m.warmup_tok_s else ""), "  ", "    ", width)
        if m.gpu_samples:
            nvml = (f"NVML while decoding ({m.gpu_decode_samples} of {m.gpu_samples} samples): SM "
                    f"{_or(m.gpu_sm_clock_mhz, ' MHz')}, memory {_or(m.gpu_mem_clock_mhz, ' MHz')}, busy "
                    f"{_or(m.gpu_util_pct, '%')}, most memory used {_or(m.gpu_memory_used_mib, ' MiB')}")
        else:
            nvml = "NVML: not sampled (--no-sampling, or NVML unreadable)"
        lines += _wrap(nvml, "  ", "    ", width)
        if verbose and m.runs:
            lines.append("  runs: " + ", ".join(f"{r.tok_s_wall:.1f}" for r in m.runs) + " tok/s")
    for x in probe.measurements:
        lines += _wrap(f"same shape, {x.engine} ({x.format}): {x.outcome}" + (f", {x.tok_s:g} tok/s" if x.tok_s else "")
                       + (f"; {x.error}" if x.error else ""), "  ", "    ", width)
    return lines


def _server_setup(m: ServerProbe) -> str:
    """What the server said of itself: its clock, context, and how much of the model is in VRAM."""
    clock = "the server's own decode counters" if m.clock == "server" else "the wall clock of its streamed tokens"
    parts = [f"timed by {clock}" if m.clock else "", f"ctx {m.n_ctx}" if m.n_ctx else "",
             f"{gb(m.vram_bytes)} of {gb(m.resident_bytes)} in VRAM" if m.vram_bytes is not None and m.resident_bytes
             else "", f"model {gb(m.model_bytes)}" if m.model_bytes else "",
             f"warm-up (load) {m.warmup_s:g} s" if m.warmup_s is not None else "",
             "" if m.local else "on another host: NVML not sampled"]
    return ", ".join(p for p in parts if p) or m.backend


def _or(value: float | None, unit: str) -> str:
    return f"{value:g}{unit}" if value is not None else "unknown"


def engine_verdict_lines(v: EngineVerdict, width: int = WIDTH) -> list[str]:
    lines = _wrap(v.summary, f"Verdict ({v.engine}): ", "  ", width)
    for c in v.causes:
        lines += _wrap(f"{c.get('text', '')} [{c.get('source', '')}]", "  - ", "    ", width)
    if v.unsettled:
        lines += _wrap(v.unsettled, "  spread: ", "    ", width)
    if v.engine_gap is not None:
        lines += _wrap(v.engine_gap.summary, "  other engines here: ", "    ", width)
    return lines


def streams_lines(probe: ProbeReport, width: int = WIDTH) -> list[str]:
    """`probe --streams`: each round's total and per-stream speed and time to first token (measured)."""
    st = probe.streams
    assert st is not None
    engine = f"{st.engine}'s dynamic generator" if st.engine.startswith("exllamav2") else st.engine
    where = (f"in {engine}" + (f", {st.mode}" if st.mode else "") + (f", {st.cache_mode} cache" if
             st.cache_mode else "") + (f", {st.context_per_stream} tokens per stream" if st.context_per_stream else "")
             if st.driven else f"at {st.url}{st.api}")
    lines = _wrap(f"Probe (concurrent streams): {st.model or 'the model'} {where}, {st.tokens} tokens per request",
                  "", "  ", width)
    if st.driven and st.mode_why:
        lines += _wrap(st.mode_why, "  why: ", "    ", width)
    for r in st.rounds:
        lines += _wrap(f"{r.streams} stream{'s' if r.streams > 1 else ''}: {r.total_tok_s:g} tok/s in total, "
                       f"{r.per_stream_tok_s:g} each (slowest {r.slowest_stream_tok_s:g}), first token "
                       f"{r.ttft_median_s:g} s median, {r.ttft_max_s:g} s max" + (f", {r.failed} failed" if r.failed else "")
                       + r.spread_said(), "  ", "    ", width)
        if r.unsettled:
            lines += _wrap(r.unsettled, "    unsettled: ", "      ", width)
    if st.error:
        lines += _wrap(st.error, "  not measured: ", "    ", width)
    return lines


def probe_lines(probe: ProbeReport, verbose: bool = False, width: int = WIDTH) -> list[str]:
    if probe.streams is not None:
        return streams_lines(probe, width)
    if probe.of_engine:
        return engine_probe_lines(probe, verbose, width)
    what = probe.synthetic or probe.model_path or "model"
    if not probe.ok:
        return [f"Probe ({what}): {probe.status} during {probe.error_phase or '?'}: {probe.summary}"]
    r = probe.result
    assert r is not None  # probe.ok: a result
    p = r.reported
    warm = f" after {p.warmup_tokens} warm-up" if p.warmup_tokens else ""
    prefill = f", prefill {r.prefill.tok_s:,.0f} tok/s" if r.prefill.seconds else ""
    host = (f"  host during the runs: CPU/wall {p.cpu_wall:.2f}, {p.faults_per_token:.0f} page faults/token"
            if any(x.cpu_s for x in p.runs) else "  host counters: not recorded")
    if r.memory.peak_allocated_mib:
        host += f"; peak VRAM {r.memory.peak_allocated_mib:,.0f} MiB, cache {r.memory.cache_bytes / MIB:,.0f} MiB"
    lines = [f"Probe: {what}",
             f"  decode {r.decode_tok_s:.1f} tok/s (median of {len(p.runs)} x {p.runs[0].tokens if p.runs else 0} tokens"
             f"{warm}, spread {p.spread_pct:.1f}%){prefill}",
             f"  {r.engine}, torch {r.torch}, {r.attention} attention, {r.cache_mode} cache, max_seq_len {r.max_seq_len} "
             f"({r.max_seq_len_source}), {r.split}", host]
    if r.bandwidth:
        lines.append(f"  memory bandwidth measured: {r.bandwidth.gbs:,.0f} GB/s (device-to-device copy, read + write)")
    if len(r.passes) > 1 or verbose:
        for q in r.passes:
            mark = " (reported)" if q.index == r.reported_pass else ""
            lines.append(f"  load {q.index}{mark}: runs {', '.join(f'{x.tok_s:.1f}' for x in q.runs)} tok/s; warm-up "
                         f"{q.warmup_tok_s:.1f} tok/s" + (f"; set aside: {q.flag}" if q.flag else ""))
    warnings = [w for w in r.warnings if w != r.max_seq_len_source]
    if warnings:
        lines += _wrap("; ".join(warnings), "  note: ", "        ", width)
    return lines


def verdict_lines(v: Verdict, verbose: bool = False, width: int = WIDTH) -> list[str]:
    lines = _wrap(v.headline, "Verdict: ", "  ", width)
    ceil = v.datasheet or v.measured
    assert ceil is not None  # a verdict has a ceiling (doctor/verdict/build.py raises NoCeiling otherwise)
    b = v.bytes
    per = (f"weights {gb(b.weights, 2)} + KV {gb(b.kv_read, 2)} at {b.context:,} tokens"
           + (f" + {gb(b.offloaded, 2)} over PCIe" if b.offloaded else ""))
    text = f"ceiling {v.ceiling_tok_s:,.1f} tok/s = {ceil.bandwidth_gbs:,.0f} GB/s ÷ {gb(b.total, 2)} per token ({per})"
    if v.datasheet and v.measured:
        text += f"; with the measured {v.measured.bandwidth_gbs:,.0f} GB/s: {v.measured.tok_s:,.1f} tok/s"
    lines += _wrap(text, "  ", "    ", width)
    lines.append(f"  measured {v.measured_tok_s:,.1f} tok/s = {v.efficiency:.0%} of the ceiling; "
                 f"{v.lost_ms_per_token:.2f} ms per token lost against weights ÷ bandwidth")
    lines.append("  where the lost time goes (estimated shares):")
    for c in v.causes:
        share = f"{c.share:>4.0%}" if c.share is not None else "   ?"
        lines += _wrap(f"{c.id}: {c.sentence}", f"    {share}  ", "          ", width)
        if verbose and c.evidence:
            lines.append("          evidence: " + ", ".join(f"{k}={val}" for k, val in c.evidence.items()))
    if v.fixes:
        lines.append("  fixes, largest expected gain first:")
        for i, f in enumerate(v.fixes, 1):
            gain = f"+{f.expected_gain_tok_s:,.1f} tok/s" if f.expected_gain_tok_s is not None else "gain unknown"
            lines += _wrap(f"{f.action} ({gain}; {f.basis})" if verbose else f"{f.action} ({gain})", f"    {i}. ", "       ", width)
    if v.options:
        lines.append("  at the card's limit: options, each with a trade-off (not a fix):")
        for i, f in enumerate(v.options, 1):
            gain = f" (+{f.expected_gain_tok_s:,.1f} tok/s)" if f.expected_gain_tok_s is not None else ""
            lines += _wrap(f"{f.action}{gain}", f"    {chr(96 + i)}. ", "       ", width)
    if v.missing_evidence:
        lines.append("  missing evidence for the unexplained gap, and the command that collects it:")
        for m in v.missing_evidence:
            lines += _wrap(m.what, "    - ", "      ", width)
        for cmd in dict.fromkeys(m.command for m in v.missing_evidence):
            lines.append(f"      $ {cmd}")
    for label, text in (("first use", v.first_use), ("reference", v.reference)):
        if text:
            lines += _wrap(text, f"  {label}: ", "    ", width)
    for s in v.set_aside:
        lines += _wrap(s, "  set aside: ", "    ", width)
    for n in v.notes:
        lines += _wrap(n, "  note: ", "    ", width)
    return lines


def report_probe_lines(report: Report, verbose: bool = False, width: int = WIDTH) -> list[str]:
    """Everything about the probe for a report: nothing when it did not run."""
    out: list[str] = []
    if isinstance(report.probe, ProbeReport):
        out += probe_lines(report.probe, verbose, width)
    if isinstance(report.verdict, Verdict):
        out += verdict_lines(report.verdict, verbose, width)
    if isinstance(report.engine_verdict, EngineVerdict) and report.engine_verdict.outcome == "ok":
        out += engine_verdict_lines(report.engine_verdict, width)
    return out
