"""Every engine probe's runs: more while their spread is over the settle line (as the ExLlamaV2 probe does), the last
`asked` runs as the window, a spread left over 10% flagged, and NVML summarised over the timed windows whatever the
utilisation (the H200 Transformers run read null over 558 samples when only samples over 50% busy counted)."""

from __future__ import annotations

from doctor.model.engine_probe import LlamaCppProbe, LlamaCppRun
from doctor.model.samples import GpuSample, GpuSeries, SampleSeries
from doctor.probe.llamacpp import gpu_summary, summarize
from doctor.probe.more_runs import MAX_FACTOR, spread_pct, timed_runs
from doctor.verdict.engine_probe import unsettled


def scripted(speeds: list[float]):
    it = iter(speeds)
    events: list[dict] = []
    clock = iter(float(i) for i in range(1000))

    def window(n: int) -> dict:
        return {"tokens": n, "tok_s_wall": next(it)}

    return window, events, lambda: next(clock)


def test_settled_runs_stop_at_the_runs_asked():
    window, events, clock = scripted([100, 101, 100, 50])
    got = timed_runs(window, 3, 128, lambda **e: events.append(e), clock=clock)
    assert got == [100, 101, 100] and [e["run"] for e in events] == [0, 1, 2]
    assert all(e["t1_mono"] > e["t0_mono"] for e in events)


def test_a_spread_is_answered_with_more_runs_until_the_last_ones_agree():
    window, events, clock = scripted([80, 100, 100, 101, 100, 0])
    assert timed_runs(window, 3, 128, lambda **e: events.append(e), clock=clock) == [80, 100, 100, 101]


def test_more_runs_stop_at_the_cap_or_the_budget():
    window, _, clock = scripted([100, 70] * 20)
    assert len(timed_runs(window, 3, 128, lambda **e: None, clock=clock)) == 3 * MAX_FACTOR
    window, _, clock = scripted([100, 70] * 20)
    assert len(timed_runs(window, 3, 128, lambda **e: None, budget_s=1.5, clock=clock)) == 4  # 1 s a run here


def test_the_window_is_the_last_runs_asked_when_more_were_run():
    runs = [LlamaCppRun(128, s) for s in (60.0, 90.0, 100.0, 101.0, 100.5)]
    p = summarize(LlamaCppProbe("llama-cpp-python", "ok", "m.gguf"), runs, asked=3)
    assert (p.dropped_runs, p.median_tok_s, p.asked_runs, len(p.runs)) == (2, 100.5, 3, 5)
    assert p.spread_pct == round(100 * 1.0 / 100.5, 2)
    assert spread_pct([100.0, 110.0]) == 100 * 10 / 105


def test_a_spread_over_ten_percent_is_flagged_with_what_was_done():
    assert unsettled(9.9, (3, 3)) == ""
    assert unsettled(14.6, (9, 3)).startswith("the runs spread 15% after 6 more runs than the 3 asked for")
    assert unsettled(12.0, (3, 3)).startswith("the runs spread 12% over 3 runs")


def test_nvml_is_summarised_over_the_timed_windows_at_any_utilisation():
    samples = (GpuSample(0.5, sm_clock_mhz=345, mem_clock_mhz=1593, util_gpu_pct=0, memory_used_mib=500.0),  # loading
               GpuSample(2.0, sm_clock_mhz=1980, mem_clock_mhz=3201, util_gpu_pct=20, memory_used_mib=2000.0),
               GpuSample(2.5, sm_clock_mhz=1980, mem_clock_mhz=3201, util_gpu_pct=30, memory_used_mib=2100.0),
               GpuSample(4.0, sm_clock_mhz=1755, mem_clock_mhz=3201, util_gpu_pct=90, memory_used_mib=2100.0))  # after
    series = SampleSeries("2026-12-04T14:00:00+00:00", 5.0, 10.0, gpus=(GpuSeries(0, samples=samples),))
    runs = [LlamaCppRun(128, 100.0, None, 1.9, 2.6)]
    got = gpu_summary(series, 0, runs)
    assert got == {"gpu_sm_clock_mhz": 1980.0, "gpu_mem_clock_mhz": 3201.0, "gpu_util_pct": 25.0,
                   "gpu_memory_used_mib": 2100.0, "gpu_samples": 4, "gpu_decode_samples": 2}
    busy = gpu_summary(series, 0, [LlamaCppRun(128, 100.0)])  # llama-bench: no windows, the card's busy samples
    assert busy["gpu_decode_samples"] == 3 and busy["gpu_util_pct"] == 30.0
    assert gpu_summary(None, 0, runs) == {}
