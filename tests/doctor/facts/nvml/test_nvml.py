"""The NVML wrapper turns every failure into a fact and decodes what the driver says."""

from __future__ import annotations

import fake_nvml
import pytest

from doctor.facts.nvml import decode_clocks_event_mask, gather_nvml
from doctor.model.unknown import Unknown, known


def test_v100_is_read_field_by_field():
    facts = gather_nvml(fake_nvml.v100())
    assert facts.available and facts.driver_version == "535.183.01" and facts.cuda_driver_version == "12.2"
    g = facts.gpus[0]
    assert g.name == "Tesla V100-PCIE-16GB" and g.compute_capability == "7.0"
    assert g.memory_total_mib == 16160.5
    # older bindings: "ClocksThrottleReasons" is used when "ClocksEventReasons" is missing
    assert g.clocks_event_reasons == ("sw_thermal_slowdown", "hw_thermal_slowdown")
    assert g.power_draw_w == 231.5 and g.slowdown_temperature_c == 87
    assert g.processes[0].used_mib == 6144.0
    assert isinstance(g.processes[0].name, Unknown)  # pid not visible here: a fact, not a crash
    assert isinstance(g.memory_temperature_c, Unknown)  # this fake has no field-value API
    assert isinstance(g.remapped_rows_pending, Unknown) and "Not Supported" in g.remapped_rows_pending.reason


def test_missing_library_is_a_fact():
    facts = gather_nvml(fake_nvml.library_missing())
    assert not facts.available and "libnvidia-ml.so" in facts.reason


def test_driver_library_mismatch_is_a_fact():
    facts = gather_nvml(fake_nvml.driver_mismatch())
    assert not facts.available and "mismatch" in facts.reason and "reboot" in facts.reason


def test_nvml_raising_on_every_call_never_raises():
    facts = gather_nvml(fake_nvml.raising_everywhere())
    assert not facts.available
    assert "GPU is lost" in facts.reason
    assert not known(facts.driver_version)


def test_missing_pynvml_module():
    facts = gather_nvml(Unknown("the nvidia-ml-py package is not importable"))
    assert not facts.available and "nvidia-ml-py" in facts.reason


def test_decode_mask():
    assert decode_clocks_event_mask(0x1) == ("gpu_idle",)
    assert decode_clocks_event_mask(0x4 | 0x80) == ("sw_power_cap", "hw_power_brake_slowdown")


NOT_AVAILABLE_32, NOT_AVAILABLE_64 = (1 << 32) - 1, (1 << 64) - 1  # NVML_VALUE_NOT_AVAILABLE as unsigned


def _mem(total):
    from types import SimpleNamespace

    return lambda h: SimpleNamespace(total=total, free=16609902592, used=335609856)


@pytest.mark.parametrize("call, fake, field, why", [
    ("nvmlDeviceGetClockInfo", lambda h, t: NOT_AVAILABLE_32, "sm_clock_mhz", "outside what a real one can be"),
    ("nvmlDeviceGetMaxClockInfo", lambda h, t: -1, "sm_clock_max_mhz", "outside"),
    ("nvmlDeviceGetMemoryInfo", _mem(NOT_AVAILABLE_64), "memory_total_mib", "outside"),
    ("nvmlDeviceGetMemoryInfo", _mem(-16945512448), "memory_total_mib", "outside"),
    ("nvmlDeviceGetPowerUsage", lambda h: NOT_AVAILABLE_32, "power_draw_w", "outside"),
    ("nvmlDeviceGetCurrPcieLinkGeneration", lambda h: NOT_AVAILABLE_32, "pcie_gen", "outside"),
    ("nvmlDeviceGetCurrPcieLinkWidth", lambda h: 0, "pcie_width", "outside"),
    ("nvmlDeviceGetTemperature", lambda h, t: float("nan"), "temperature_c", "not a finite number"),
    ("nvmlDeviceGetTotalEccErrors", lambda h, e, c: NOT_AVAILABLE_64, "ecc_uncorrected_volatile", "outside"),
    ("nvmlDeviceGetMemoryBusWidth", lambda h: "banana", "memory_bus_width_bits", "not a number"),
    ("nvmlDeviceGetCurrentClocksThrottleReasons", lambda h: NOT_AVAILABLE_64, "clocks_event_mask", "outside"),
])
def test_absurd_nvml_numbers_become_unknown_with_the_reason(call, fake, field, why):
    m = fake_nvml.v100()
    setattr(m, call, fake)
    g = gather_nvml(m).gpus[0]
    value = getattr(g, field)
    assert isinstance(value, Unknown), f"{field} = {value!r} passed"
    assert value.reason.startswith(f"recorded by NVML: {field} ") and why in value.reason
    assert g.name == "Tesla V100-PCIE-16GB" and g.compute_capability == "7.0"  # the rest is still read


def test_a_process_memory_nvml_cannot_report_is_unknown():
    from types import SimpleNamespace

    m = fake_nvml.v100()
    m.nvmlDeviceGetComputeRunningProcesses = lambda h: [SimpleNamespace(pid=1, usedGpuMemory=NOT_AVAILABLE_64)]
    used = gather_nvml(m).gpus[0].processes[0].used_mib
    assert isinstance(used, Unknown) and "used_mib" in used.reason


def test_real_values_of_every_card_in_the_fixtures_pass():
    """The ranges reject sentinels, not real cards: no number a recorded GPU holds is out of range."""
    import json

    from conftest import MACHINES, ROOT

    from doctor.model.plausible import NVML_RANGES, problem

    checked = []
    for path in sorted(MACHINES.glob("*.json")) + sorted((ROOT / "benchmarks" / "results").rglob("*.json")):
        doc = json.loads(path.read_text())
        nvml = doc.get("facts", {}).get("nvml") if isinstance(doc, dict) and isinstance(doc.get("facts"), dict) else None
        for g in nvml.get("gpus", []) if isinstance(nvml, dict) else []:
            for name, value in g.items():
                if name in NVML_RANGES and isinstance(value, (int, float)):
                    assert problem(name, value) is None, (path.name, name, value)
                    checked.append(name)
    assert len(checked) > 100 and set(checked) >= {"memory_total_mib", "sm_clock_max_mhz", "pcie_width_max"}
