"""Each runtime check on built facts: pass, warn, fail and skip, asserting the verdict and its evidence."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pytest
from conftest import MACHINES

from checks.base import CheckContext
from checks.runner import run_one
from checks.runtime import cpu_offload, gpu_memory_health, gpu_processes, pcie_link, thermal
from doctor.facts.engines.launch_config import parse_launch_config
from doctor.facts.replay import load_document
from doctor.model.facts import GpuProcess
from doctor.model.findings import Status
from doctor.model.plan import Plan
from doctor.model.samples import GpuProcessUse, GpuSample, GpuSeries, ProcessSample, ProcessSeries, SampleSeries, WindowCounters
from doctor.model.unknown import Unknown

BASE = load_document(str(MACHINES / "v100-pcie-16gb-healthy.json")).facts
V100 = dict(name="Tesla V100-PCIE-16GB", sm_clock_max_mhz=1380, mem_clock_max_mhz=877, power_limit_w=250.0,
            power_default_limit_w=250.0, slowdown_temperature_c=87, max_operating_temperature_c=83,
            memory_max_temperature_c=85, pcie_gen_max=3, pcie_width_max=16, memory_total_mib=16160.5)
GB = 1e9


def gpu(**kw):
    return replace(BASE.nvml.gpus[0], **kw)


def facts(g=None, samples=None, launch=None):
    f = replace(BASE, samples=samples, launch_config=launch)
    return replace(f, nvml=replace(f.nvml, gpus=(g,))) if g is not None else f


def busy(t: float, **kw) -> GpuSample:
    base = dict(t_s=t, sm_clock_mhz=1380, mem_clock_mhz=877, reasons=(), temperature_c=70, memory_temperature_c=68,
                power_w=180.0, util_gpu_pct=97, util_mem_pct=80, pcie_rx_mbs=0.4, pcie_tx_mbs=39.0, pcie_gen=3,
                pcie_width=16, memory_used_mib=15230.0, processes=(GpuProcessUse(4242, 14908.0),))
    base.update(kw)
    return GpuSample(**base)


def idle(t: float, **kw) -> GpuSample:
    return busy(t, sm_clock_mhz=135, reasons=("gpu_idle",), util_gpu_pct=0, power_w=25.0, pcie_gen=1, processes=(),
                memory_used_mib=0.0, **kw)


def series(samples, counters=None, procs=(), watched=(4242,), **static) -> SampleSeries:
    g = GpuSeries(index=0, **{**V100, **static}, samples=tuple(samples), counters=counters,
                  process_names={"4242": "python3", "5150": "python3"})
    return SampleSeries(started_at="t", duration_s=samples[-1].t_s, hz=5.0, gpus=(g,), processes=tuple(procs),
                        watched_pids=watched)


def ts(n: int = 50):
    return [i / 5 for i in range(n)]


def run(check, f, plan=Plan()):
    return run_one(check.CHECK, CheckContext(facts=f, plan=plan))


# --- thermal -------------------------------------------------------------------------------------

def test_thermal_idle_at_rest_is_not_throttling():
    r = run(thermal, facts())
    assert r.status == Status.PASS and "idle clocks with the idle reason" in r.summary
    assert r.evidence["clocks_event_reasons"] == ["gpu_idle"] and r.evidence["margin_c"] == 53


@pytest.mark.parametrize("kw, status, text", [
    (dict(temperature_c=84, clocks_event_reasons=()), Status.WARN, "84 °C is 3 °C below the 87 °C slowdown threshold"),
    (dict(temperature_c=86, clocks_event_reasons=("hw_thermal_slowdown",)), Status.FAIL, "HW thermal slowdown is active right now"),
    (dict(power_limit_w=150.0), Status.WARN, "enforced power limit 150 W is below the default 250 W"),
])
def test_thermal_at_rest_problems(kw, status, text):
    r = run(thermal, facts(gpu(**kw)))
    assert r.status == status and text in r.summary
    if "power_limit_w" in kw:
        assert any("-pl 250" in c for c in r.commands)


def test_thermal_under_load_healthy():
    r = run(thermal, facts(samples=series([busy(t) for t in ts()])))
    assert r.status == Status.PASS and "memory clock at 100% of max" in r.summary
    assert r.evidence["mem_clock_ratio"] == 1.0 and r.evidence["throttle_fraction_of_busy_samples"] == {}


def test_thermal_under_load_slowdown_fails_with_fractions_and_memory_clock():
    samples = [busy(t) for t in ts(30)] + [busy(t, temperature_c=87, sm_clock_mhz=690, mem_clock_mhz=810,
                                                 reasons=("hw_slowdown", "hw_thermal_slowdown")) for t in ts(50)[30:]]
    r = run(thermal, facts(samples=series(samples)))
    assert r.status == Status.FAIL
    assert r.evidence["throttle_fraction_of_busy_samples"] == {"hw_slowdown": 0.4, "hw_thermal_slowdown": 0.4}
    assert r.evidence["mem_clock_ratio_min"] == round(810 / 877, 3) and r.evidence["mem_clock_dropped_fraction"] == 0.4
    assert "87 °C reached the 87 °C slowdown threshold" in r.summary and "memory clock fell below max in 40%" in r.summary


def test_thermal_driver_counters_catch_what_samples_missed():
    counters = WindowCounters(window_s=10.0, throttle_s={"thermal": 2.0, "power": 0.0})
    r = run(thermal, facts(samples=series([busy(t) for t in ts()], counters=counters)))
    assert r.status == Status.FAIL and "driver thermal counter 20% of the window" in r.summary
    assert r.evidence["throttle_seconds_from_driver_counters"]["thermal"] == 2.0


def test_thermal_power_cap_warns_and_names_the_lowered_limit():
    samples = [busy(t, reasons=("sw_power_cap",), sm_clock_mhz=1100, power_w=149.5) for t in ts()]
    r = run(thermal, facts(samples=series(samples, power_limit_w=150.0)))
    assert r.status == Status.WARN and "SW power cap held the clocks during 100% of the load" in r.summary
    assert r.evidence["power_limit_w"] == 150.0 and any("-pl 250" in c for c in r.commands)
    assert r.evidence["mem_clock_ratio"] == 1.0


def test_thermal_sw_power_cap_at_the_boards_own_limit_is_not_throttling_while_memory_holds():
    """A T4 decodes at its 70 W limit (its default and maximum): the cap trims the SM clock, the memory clock holds."""
    t4 = dict(name="Tesla T4", power_limit_w=70.0, power_default_limit_w=70.0, power_draw_w=69.6, mem_clock_max_mhz=5001,
              sm_clock_max_mhz=1590, sm_clock_mhz=1350, clocks_event_reasons=("sw_power_cap",), temperature_c=68)
    r = run(thermal, facts(gpu(**t4, mem_clock_mhz=5001)))
    assert r.status == Status.PASS and "board's own power limit (70 W" in r.summary
    dropped = run(thermal, facts(gpu(**t4, mem_clock_mhz=3500)))  # the memory clock fell: decode pays
    assert dropped.status == Status.WARN and "SW power cap is active" in dropped.summary
    lowered = run(thermal, facts(gpu(**{**t4, "power_limit_w": 60.0}, mem_clock_mhz=5001)))
    assert lowered.status == Status.WARN and "below the default 70 W" in lowered.summary
    samples = [busy(t, reasons=("sw_power_cap",), sm_clock_mhz=1300, power_w=249.0) for t in ts()]
    under_load = run(thermal, facts(samples=series(samples)))  # V100 at its default 250 W, HBM2 clock held
    assert under_load.status == Status.PASS and "at the board's own limit" in under_load.summary


def test_thermal_power_brake_on_sxm2_is_power_delivery_not_heat():
    samples = [busy(t, temperature_c=60, sm_clock_mhz=600, reasons=("hw_slowdown", "hw_power_brake_slowdown")) for t in ts()]
    r = run(thermal, facts(gpu(name="Tesla V100-SXM2-16GB"), samples=series(samples, name="Tesla V100-SXM2-16GB")))
    assert r.status == Status.FAIL and "HW power brake 100% of the load" in r.summary and "not heat" in r.summary
    assert "heat during" not in r.summary and r.evidence["form_factor"] == "sxm"
    assert "BMC" in r.fix and "power supply" in r.summary and "passive PCIe" not in r.fix
    assert not any("-pl" in c for c in r.commands)  # a power cap does not clear an external brake


@pytest.mark.parametrize("name, wording", [("Tesla V100-PCIE-16GB", "passive PCIe card"), ("Tesla V100-SXM2-16GB", "fan policy in the BMC")])
def test_thermal_heat_fix_fits_the_form_factor(name, wording):
    samples = [busy(t, temperature_c=88, sm_clock_mhz=690, reasons=("hw_thermal_slowdown",)) for t in ts()]
    r = run(thermal, facts(gpu(name=name), samples=series(samples, name=name)))
    assert r.status == Status.FAIL and wording in r.fix and any("-pl 200" in c for c in r.commands)


def test_thermal_idle_window_is_never_throttling():
    r = run(thermal, facts(samples=series([idle(t) for t in ts()], watched=())))
    assert r.status == Status.PASS and "idle for the whole" in r.summary and "not throttling" in r.summary


# --- cpu-offload ---------------------------------------------------------------------------------

def fake_model(monkeypatch, gpu_bytes=12.7 * GB, embedding=1.56 * GB):
    mb = SimpleNamespace(gpu_bytes=gpu_bytes, embedding_bytes=embedding, source="safetensors headers")
    monkeypatch.setattr(cpu_offload, "model_bytes", lambda ctx: (mb, ""))
    return mb


def test_offload_without_evidence_is_skipped_with_the_way_to_get_some():
    r = run(cpu_offload, facts())
    assert r.status == Status.SKIP and "v100-doctor watch --pid PID" in r.summary


def test_offload_sustained_pcie_rx_fails():
    samples = [busy(t, pcie_rx_mbs=11200.0 if i % 6 else 20.0, util_gpu_pct=25) for i, t in enumerate(ts())]
    r = run(cpu_offload, facts(samples=series(samples)))
    assert r.status == Status.FAIL and "weights are being streamed" in r.summary
    assert r.evidence["pcie_rx_streaming_fraction"] == pytest.approx(0.82, abs=0.01)
    assert r.evidence["pcie_rx_busy_median_mbs"] == 11200.0 and r.evidence["link"] == "PCIe gen3 x16"
    assert "Each GB streamed per token caps decode" in r.summary


def test_offload_quiet_pcie_passes():
    r = run(cpu_offload, facts(samples=series([busy(t) for t in ts()])))
    assert r.status == Status.PASS and "no bulk transfer" in r.summary


def test_offload_model_loading_burst_is_a_warning_not_streaming():
    samples = [busy(t, pcie_rx_mbs=12000.0 if i < 8 else 0.3) for i, t in enumerate(ts())]
    r = run(cpu_offload, facts(samples=series(samples)))
    assert r.status == Status.WARN and "not sustained" in r.summary


def test_offload_config_with_bytes_states_the_cost(monkeypatch):
    fake_model(monkeypatch)
    cfg = parse_launch_config("vllm serve /m --cpu-offload-gb 2\n", "run.sh")
    r = run(cpu_offload, facts(launch=cfg))
    assert r.status == Status.FAIL and "run.sh:1" in r.summary
    assert r.evidence["offloaded_bytes"] == 2 * 2**30 and r.evidence["link_gbs_est"] == 12.61
    # 10.55 GB at 900 GB/s + 2.15 GB at 12.61 GB/s per token -> 5.5 tok/s, against 70.9 all in VRAM
    assert r.evidence["decode_cap_tok_s_est"] == pytest.approx(5.49, abs=0.02)
    assert r.evidence["ceiling_all_in_vram_tok_s"] == 70.9 and "caps decode at ~" in r.summary


def test_offload_device_map_auto_alone_is_a_warning():
    r = run(cpu_offload, facts(launch=parse_launch_config("m = load(p, device_map='auto')\n", "serve.py")))
    assert r.status == Status.WARN and "device_map=auto" in r.summary


def test_offload_max_memory_cap_below_the_model_fails(monkeypatch):
    fake_model(monkeypatch)
    r = run(cpu_offload, facts(launch=parse_launch_config("max_memory={0: '10GiB', 'cpu': '40GiB'}\n", "s.py")))
    assert r.status == Status.FAIL and r.evidence["offloaded_bytes"] == round(12.7 * GB - 10 * 2**30)


def test_offload_plan_split_too_small(monkeypatch):
    fake_model(monkeypatch)
    r = run(cpu_offload, facts(), Plan(gpu_split=(10.0,)))
    assert r.status == Status.FAIL and "Insufficient space in device allocation" in r.summary
    ok = run(cpu_offload, facts(), Plan(gpu_split=(16.0,)))
    assert ok.status == Status.PASS and "covers the model" in ok.summary


@pytest.mark.parametrize("vram_mib, rss_mib, status, text", [
    (9000.0, 8200.0, Status.FAIL, "anonymous RSS holds the missing"),
    (9000.0, 2500.0, Status.WARN, "does not hold the rest"),
    (12300.0, 4400.0, Status.PASS, "enough for the model"),
])
def test_offload_from_the_running_process(monkeypatch, vram_mib, rss_mib, status, text):
    fake_model(monkeypatch)
    proc = ProcessSeries(pid=4242, name="python3", samples=(ProcessSample(0.0, rss_mib=rss_mib, shared_mib=200.0),))
    samples = [busy(t, processes=(GpuProcessUse(4242, vram_mib),)) for t in ts()]
    r = run(cpu_offload, facts(samples=series(samples, procs=(proc,))))
    assert r.status == status and text in r.summary
    assert r.evidence["process_vram_bytes"] == vram_mib * 2**20


# --- gpu-processes -------------------------------------------------------------------------------

def test_processes_none_at_rest():
    r = run(gpu_processes, facts())
    assert r.status == Status.PASS and "no process holds this GPU" in r.summary


def test_processes_another_at_rest_is_named_with_mib():
    g = gpu(processes=(GpuProcess(pid=5150, name="python3", used_mib=6144.0),), memory_used_mib=6464.0)
    r = run(gpu_processes, facts(g))
    assert r.status == Status.WARN and "pid 5150 (python3, 6,144 MiB)" in r.summary
    assert r.evidence["others_mib"] == 6144.0 and r.evidence["memory_free_mib"] == pytest.approx(9696.5)


def test_processes_unlisted_but_memory_used_warns():
    g = gpu(processes=Unknown("nvmlDeviceGetComputeRunningProcesses: No Permission"), memory_used_mib=3000.0)
    r = run(gpu_processes, facts(g))
    assert r.status == Status.WARN and "No Permission" in r.summary
    assert run(gpu_processes, facts(replace(g, memory_used_mib=300.0))).status == Status.SKIP


def test_processes_unlisted_under_wsl2_is_normal_not_a_sudo_warning():
    g = gpu(processes=(), memory_used_mib=1510.0)
    f = facts(g)
    r = run(gpu_processes, replace(f, host=replace(f.host, wsl=True)))
    assert r.status == Status.INFO and "WSL2" in r.summary and not r.commands
    unlisted = gpu(processes=Unknown("nvmlDeviceGetComputeRunningProcesses: Not Supported"), memory_used_mib=3000.0)
    f = facts(unlisted)
    assert run(gpu_processes, replace(f, host=replace(f.host, wsl=True))).status == Status.INFO
    assert run(gpu_processes, f).status == Status.WARN  # the same reading off WSL2 still warns


def test_processes_under_load_yours_only_passes():
    r = run(gpu_processes, facts(samples=series([busy(t) for t in ts()])))
    assert r.status == Status.PASS and "only yours: pid 4242 (python3, 14,908 MiB)" in r.summary


def test_processes_under_load_other_6gb_warns_and_fails_when_the_model_no_longer_fits(monkeypatch):
    procs = (GpuProcessUse(4242, 9310.0), GpuProcessUse(5150, 6144.0))
    f = facts(samples=series([busy(t, processes=procs, memory_used_mib=15790.0) for t in ts()]))
    r = run(gpu_processes, f)
    assert r.status == Status.WARN and "pid 5150 (python3, 6,144 MiB)" in r.summary and "370 of 16,160 MiB free" in r.summary
    monkeypatch.setattr(gpu_processes, "model_bytes", lambda ctx: (SimpleNamespace(gpu_bytes=12.7 * GB), ""))
    r = run(gpu_processes, f)
    assert r.status == Status.FAIL and "no longer fit" in r.summary


def test_processes_whole_gpu_watch_with_one_process_passes():
    r = run(gpu_processes, facts(samples=series([busy(t) for t in ts()], watched=())))
    assert r.status == Status.PASS and "give --pid" in r.summary


# --- pcie-link -----------------------------------------------------------------------------------

def test_pcie_idle_gen1_at_rest_is_power_saving():
    r = run(pcie_link, facts(gpu(pcie_gen=1)))
    assert r.status == Status.PASS and "trains up to gen3 under load" in r.summary


def test_pcie_low_gen_while_busy_warns():
    r = run(pcie_link, facts(gpu(pcie_gen=1, clocks_event_reasons=())))
    assert r.status == Status.WARN and "gen1, below gen3, while the GPU works" in r.summary


def test_pcie_half_width_warns_with_costs():
    r = run(pcie_link, facts(samples=series([busy(t, pcie_width=8) for t in ts()])))
    assert r.status == Status.WARN and "x8 of x16 lanes" in r.summary
    assert r.evidence["bandwidth_ratio"] == 0.5 and r.evidence["offload_tok_s_per_gb_now_est"] == 6.3
    assert r.evidence["load_10GB_s_now_est"] == 1.6


def test_pcie_full_link_under_load_passes():
    r = run(pcie_link, facts(samples=series([busy(t) for t in ts()])))
    assert r.status == Status.PASS and r.summary.startswith("PCIe gen3 x16 (max gen3 x16) while busy")


def test_pcie_unknown_link_is_skipped():
    r = run(pcie_link, facts(gpu(pcie_gen=Unknown("Not Supported"))))
    assert r.status == Status.SKIP


# --- gpu-memory-health ---------------------------------------------------------------------------

def test_memory_health_clean():
    r = run(gpu_memory_health, facts())
    assert r.status == Status.PASS and "0 uncorrectable, 0 corrected errors" in r.summary
    assert r.evidence["retired_pages_count"] == 0


@pytest.mark.parametrize("kw, status, text", [
    (dict(ecc_uncorrected_volatile=2), Status.FAIL, "2 uncorrectable ECC errors"),
    (dict(retired_pages_pending=True), Status.WARN, "page retirement is pending"),
    (dict(retired_pages_count=64), Status.FAIL, "capacity is used up"),
    (dict(retired_pages_count=50), Status.WARN, "50 of at most 64 pages retired"),
    (dict(remapped_rows_failure=True), Status.FAIL, "row remapping failed"),
    (dict(remapped_rows_pending=True, remapped_rows_correctable=3, remapped_rows_uncorrectable=0), Status.WARN,
     "row remapping is pending"),
])
def test_memory_health_problems(kw, status, text):
    r = run(gpu_memory_health, facts(gpu(**kw)))
    assert r.status == status and text in r.summary
    key = next(iter(kw))
    assert r.evidence[key] == kw[key]


def test_memory_health_consumer_card_is_skipped():
    u = Unknown("Not Supported")
    g = gpu(ecc_mode=u, ecc_uncorrected_volatile=u, ecc_corrected_volatile=u, retired_pages_pending=u,
            retired_pages_count=u)
    assert run(gpu_memory_health, facts(g)).status == Status.SKIP


def test_offload_reads_the_model_groups_arithmetic_for_real_model_facts():
    """No fake: the 27B EXL2 3.75 bpw fixture's config, sized by doctor.knowledge.arithmetic.model_bytes (~12.5 GB on the GPU)."""
    from conftest import ROOT

    from doctor.facts.modeldir.directory import gather_model

    model = gather_model(str(ROOT / "fixtures" / "models" / "qwen2-27b-exl2-3.75bpw"))
    f = replace(facts(), model=model)
    r = run(cpu_offload, f, Plan(gpu_split=(10.0,)))
    assert r.status == Status.FAIL and r.evidence["model_gpu_bytes"] == pytest.approx(12.5e9, rel=0.01)
    assert r.evidence["offloaded_bytes"] == pytest.approx(12.5e9 - 10 * 2**30, rel=0.01)
    assert r.evidence["ceiling_all_in_vram_tok_s"] == pytest.approx(72.0, abs=0.5)  # 900 GB/s / 12.5 GB
