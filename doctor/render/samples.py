"""Text for a sampled series: a few summary lines per GPU and process; every sample behind -v."""

from __future__ import annotations

from doctor.model import server_summary
from doctor.model.sample_summary import GpuSummary, summarize_gpu
from doctor.model.samples import GpuSeries, SampleSeries, ServerSeries

MAX_SERVER_ROWS = 40  # the server's timeline without -v (evenly thinned; idle stretches are one row already)
MAX_ROWS = 120  # -v prints at most this many sample rows per GPU (evenly thinned); the JSON keeps all


def _n(v: float | None, unit: str = "", digits: int = 0) -> str:
    return "–" if v is None else f"{v:,.{digits}f}{unit}"


def _ratio(v: float | None) -> str:
    return "–" if v is None else f"{v * 100:.0f}%"


def gpu_lines(g: GpuSeries, s: GpuSummary) -> list[str]:
    name = g.name or f"GPU {g.index}"
    reasons = ", ".join(f"{r} {_ratio(f)}" for r, f in s.reason_fraction.items()) or "none reported"
    counters = ", ".join(f"{k} {v:g} s" for k, v in s.counter_throttle_s.items()) or "not offered"
    pcie = (f"RX mean {_n(s.pcie_rx_mean_mbs, ' MB/s', 1)} ({s.pcie_source}), busy median "
            f"{_n(s.pcie_rx_busy_median_mbs, ' MB/s', 1)}, max {_n(s.pcie_rx_max_mbs, ' MB/s', 1)}; "
            f"TX mean {_n(s.pcie_tx_mean_mbs, ' MB/s', 1)}")
    lines = [
        f"  GPU {g.index} {name}: {s.samples} samples over {s.window_s:.1f} s, {s.busy_samples} busy",
        f"    clocks (busy median): SM {_n(s.sm_clock_median_mhz, ' MHz')} = {_ratio(s.sm_clock_ratio)} of "
        f"{_n(g.sm_clock_max_mhz, ' MHz')}; memory {_ratio(s.mem_clock_ratio)} of {_n(g.mem_clock_max_mhz, ' MHz')} "
        f"(min {_ratio(s.mem_clock_ratio_min)})",
        f"    reasons (share of samples): {reasons}; driver throttle counters: {counters}",
        f"    temperature max {_n(s.temperature_max_c, ' °C')} (slowdown {_n(g.slowdown_temperature_c, ' °C')}), memory "
        f"max {_n(s.memory_temperature_max_c, ' °C')}; power mean {_n(s.power_mean_w, ' W', 1)} ({s.power_source or '–'}), "
        f"max {_n(s.power_max_w, ' W', 1)} of {_n(g.power_limit_w, ' W')} enforced / {_n(g.power_default_limit_w, ' W')} default",
        f"    utilisation (busy mean) {_n(s.util_busy_mean_pct, '%')}; memory used max {_n(s.memory_used_max_mib, ' MiB')} of "
        f"{_n(g.memory_total_mib, ' MiB')}",
        f"    PCIe: {pcie}",
    ]
    if g.unavailable:
        lines.append("    not offered by the driver: " + ", ".join(sorted(g.unavailable)))
    return lines


def process_lines(series: SampleSeries) -> list[str]:
    out = []
    for p in series.processes:
        if p.unavailable:
            out.append(f"  pid {p.pid}: {p.unavailable}")
            continue
        rss = [x.rss_mib for x in p.samples if x.rss_mib is not None]
        cpu = [x.cpu_pct for x in p.samples if x.cpu_pct is not None]
        gone = f", exited at {p.exited_at_s:.1f} s" if p.exited_at_s is not None else ""
        child = f", child of {p.child_of}" if p.child_of is not None else ""
        out.append(f"  pid {p.pid} ({p.name or '?'}, {p.user or '?'}{child}): RSS max {_n(max(rss) if rss else None, ' MiB')}, "
                   f"CPU mean {_n(sum(cpu) / len(cpu) if cpu else None, '% of a core')}{gone}")
    swaps = [(h.swap_in_mbs or 0.0) + (h.swap_out_mbs or 0.0) for h in series.host]
    if swaps:
        out.append(f"  host swap traffic: max {max(swaps):.1f} MB/s")
    if series.sampler_cpu_s is not None and series.duration_s > 0:
        out.append(f"  sampler cost: {series.sampler_cpu_s * 1000 / series.duration_s:.1f} ms CPU per second at {series.hz:g} Hz")
    return out


def sample_rows(g: GpuSeries) -> list[str]:
    step = max(1, -(-len(g.samples) // MAX_ROWS))
    rows = ["    t_s    SM   mem  temp mtemp  power util  rx_MB/s  tx_MB/s  used_MiB  reasons"]
    for s in g.samples[::step]:
        rows.append(f"  {s.t_s:7.2f} {_n(s.sm_clock_mhz):>5} {_n(s.mem_clock_mhz):>5} {_n(s.temperature_c):>5} "
                    f"{_n(s.memory_temperature_c):>5} {_n(s.power_w, '', 1):>6} {_n(s.util_gpu_pct):>4} "
                    f"{_n(s.pcie_rx_mbs, '', 1):>8} {_n(s.pcie_tx_mbs, '', 1):>8} {_n(s.memory_used_mib):>9}  "
                    f"{','.join(s.reasons) if s.reasons else '-'}")
    if step > 1:
        rows.append(f"  (every {step}th of {len(g.samples)} samples; all of them are in the JSON report)")
    return rows


def _change(a: float | None, b: float | None) -> str:
    """A gauge at an interval's two ends: "4", or "1→2" where it moved."""
    if a is None and b is None:
        return "–"
    if a == b or a is None or b is None:
        return f"{b if b is not None else a:g}"
    return f"{a:g}→{b:g}"


def server_lines(server: ServerSeries, gpu: GpuSeries | None, verbose: bool = False) -> list[str]:
    """The engine server's own counters over the window (watch --engine-url), interval by interval beside the GPU's
    utilisation and clocks over the same seconds."""
    name = server_summary.label(server.kind)
    if server.error or not server.samples:
        return [f"  {name} at {server.url}: {server.error or 'not read'}"]
    ev = server_summary.summary(server)
    head = f"  {name} at {server.url}, read {ev['readings']} times"
    if server.kind in server_summary.NO_COUNTERS:
        return [f"  {server_summary.NO_COUNTERS[server.kind]} (at {server.url}, read {ev['readings']} times)"]
    most = [f"{ev[k]:g} {what}" for k, what in (("most_in_flight", "in flight"), ("most_queued", "queued"))
            if k in ev]
    if "most_slots_busy" in ev:
        most.append(f"{ev['most_slots_busy']:g} of {ev.get('slots', '?')} slots busy")
    lines = [head + (f" (every {ev['interval_s']:g} s)" if "interval_s" in ev else "")
             + (": at most " + ", ".join(most) if most else ": no counters read")]
    served = []
    if "tokens_served" in ev:
        served.append(f"{ev['tokens_served']:,} tokens generated in the window")
    if "served_tok_s_working" in ev:
        peak = f", peak {server_summary.tok_s(ev['served_tok_s_peak'])}" if ev["working_intervals"] > 1 else ""
        served.append(f"{server_summary.tok_s(ev['served_tok_s_working'])} over the {ev['working_s']:.0f} s with work"
                      f"{peak}; {server_summary.tok_s(ev['served_tok_s'])} over the whole window")
    if "per_request_tok_s" in ev:
        served.append(f"{server_summary.tok_s(ev['per_request_tok_s'])} per request while generating (the server's own "
                      "timing)")
    if served:
        lines.append("    served: " + "; ".join(served))
    if "stopped_answering_at_s" in ev:
        lines.append(f"    stopped answering at {ev['stopped_answering_at_s']:g} s")
    rows = server_summary.intervals(server, gpu, merge_idle=True)
    step = 1 if verbose else max(1, -(-len(rows) // MAX_SERVER_ROWS))
    if rows:
        lines.append("       t_s (from–to)   in flight  queued   slots busy  served tok/s  GPU util  SM MHz  mem MHz")
    for i in rows[::step]:
        slots = f"{_change(i.start.slots_busy, i.end.slots_busy)} of {i.end.slots}" if i.end.slots else "–"
        what = "" if i.working else "  idle"
        lines.append(f"    {i.t0_s:7.1f}–{i.t1_s:<7.1f}  {_change(i.start.in_flight, i.end.in_flight):>10} "
                     f"{_change(i.start.queued, i.end.queued):>7} {slots:>12} {_n(i.served_tok_s, '', 1):>13} "
                     f"{_n(i.gpu_util_pct, '%'):>9} {_n(i.sm_clock_mhz):>7} {_n(i.mem_clock_mhz):>8}{what}")
    if step > 1:
        lines.append(f"    (every {step}th of {len(rows)} intervals; -v shows all, the JSON keeps every reading)")
    if any(s.tokens_in_progress is not None for s in server.samples) or server.kind == "vllm":
        lines.append("    served tok/s: tokens generated between two readings, over the seconds between them")
    elif server.kind == "llama-server":
        lines.append("    served tok/s: tokens of the requests that ended between two readings (llama-server counts a "
                     "request's tokens when it ends), over the seconds between them")
    return lines


def render_series(series: SampleSeries, verbose: bool = False) -> list[str]:
    lines = [f"Sampled {series.duration_s:.1f} s at {series.hz:g} Hz from {series.started_at}"
             + (f" ({series.note})" if series.note else "")]
    if series.nvml_reason:
        lines.append(f"  no GPU readings: {series.nvml_reason}")
    if series.nvml_stopped:
        lines.append(f"  GPU readings ended early: {series.nvml_stopped}")
    for g in series.gpus:
        lines += gpu_lines(g, summarize_gpu(g))
        if verbose:
            lines += sample_rows(g)
    if series.server is not None:
        lines += server_lines(series.server, series.gpus[0] if series.gpus else None, verbose)
    return lines + process_lines(series)
