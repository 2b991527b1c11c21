"""Summaries of a series: busy vs idle samples, and the driver's counters winning over sampled estimates."""

from __future__ import annotations

from doctor.model.sample_summary import is_busy, summarize_gpu
from doctor.model.samples import GpuProcessUse, GpuSample, GpuSeries, SampleSeries, WindowCounters
from doctor.render.samples import render_series


def g(samples, counters=None, **kw):
    return GpuSeries(index=0, name="Tesla V100-PCIE-16GB", sm_clock_max_mhz=1380, mem_clock_max_mhz=877,
                     samples=tuple(samples), counters=counters, **kw)


def s(t, reasons=(), sm=1380, mem=877, rx=0.5, power=180.0, util=97, procs=()):
    return GpuSample(t_s=t, sm_clock_mhz=sm, mem_clock_mhz=mem, reasons=reasons, pcie_rx_mbs=rx, power_w=power,
                     util_gpu_pct=util, processes=procs)


def test_idle_samples_are_left_out_of_clock_ratios_and_throttle_fractions():
    series = g([s(0, ("gpu_idle",), sm=135, util=0)] * 4 + [s(1, ("sw_power_cap",), sm=1100), s(2)])
    x = summarize_gpu(series)
    assert (x.samples, x.busy_samples) == (6, 2)
    assert x.sm_clock_median_mhz == 1240.0 and x.throttle_fraction_busy == {"sw_power_cap": 0.5}
    assert x.reason_fraction == {"gpu_idle": 0.667, "sw_power_cap": 0.167}


def test_busy_falls_back_to_utilisation_when_reasons_are_missing():
    assert is_busy(GpuSample(t_s=0, util_gpu_pct=3)) and not is_busy(GpuSample(t_s=0, util_gpu_pct=0))
    assert not is_busy(GpuSample(t_s=0, reasons=("gpu_idle",), util_gpu_pct=5))


def test_no_kernel_ran_is_idle_even_where_the_driver_names_no_idle_reason():
    """The H200 recorded in benchmarks/results/issue38-streams keeps its clocks at maximum and reports no gpu_idle
    while util reads 0%: those samples are idle, not "busy" at full clocks."""
    assert not is_busy(GpuSample(t_s=0, reasons=(), util_gpu_pct=0, sm_clock_mhz=1980))
    assert is_busy(GpuSample(t_s=0, reasons=(), util_gpu_pct=1)) and is_busy(GpuSample(t_s=0, reasons=()))
    series = g([s(t, reasons=(), util=97) for t in range(6)] + [s(t, reasons=(), util=0) for t in range(6, 40)])
    x = summarize_gpu(series)
    assert (x.samples, x.busy_samples, x.util_busy_mean_pct) == (40, 6, 97.0)


def test_counters_win_over_samples_for_power_and_pcie():
    c = WindowCounters(window_s=10.0, energy_j=1500.0, pcie_rx_bytes=20 * 10**9, pcie_tx_bytes=10**8, pcie_counted_s=10.0)
    x = summarize_gpu(g([s(0, rx=1.0), s(5, rx=1.0)], counters=c))
    assert (x.power_mean_w, x.power_source) == (150.0, "energy counter")
    assert (x.pcie_rx_mean_mbs, x.pcie_tx_mean_mbs, x.pcie_source) == (2000.0, 10.0, "byte counters")
    assert x.pcie_rx_busy_median_mbs == 1.0  # the per-sample view stays for the "sustained" test


def test_streaming_fraction_and_process_peaks():
    procs = (GpuProcessUse(7, 100.0),)
    x = summarize_gpu(g([s(0, rx=9000.0, procs=procs), s(1, rx=10.0, procs=(GpuProcessUse(7, 300.0),)), s(2, rx=8000.0)]))
    assert x.pcie_rx_streaming_fraction == 0.667 and x.process_max_mib == {"7": 300.0}


def test_text_summary_and_verbose_rows():
    series = SampleSeries(started_at="2026-12-02T10:00:00+00:00", duration_s=1.0, hz=5.0,
                          gpus=(g([s(i / 5) for i in range(6)], unavailable={"memory_temperature_c": "n/a"}),),
                          sampler_cpu_s=0.004)
    short = "\n".join(render_series(series))
    assert "6 samples over 1.0 s, 6 busy" in short and "memory 100% of 877 MHz" in short
    assert "not offered by the driver: memory_temperature_c" in short and "4.0 ms CPU per second" in short
    rows = render_series(series, verbose=True)
    assert sum(1 for r in rows if r.strip().startswith(("0.", "1."))) == 6
