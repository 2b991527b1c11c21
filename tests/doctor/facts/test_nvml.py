"""The NVML wrapper turns every failure into a fact and decodes what the driver says."""

from __future__ import annotations

from doctor.facts.nvml import decode_clocks_event_mask, gather_nvml
from doctor.model.unknown import Unknown, known

import fake_nvml


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
