"""The one NVML reader, seen from both of its users: the snapshot (gather_nvml) and the sampler.

Each case drives the same fake through both paths and checks they agree: a reading the driver does not
support, an NVML sentinel, a GPU lost mid-run, a busy driver, old binding and driver names.
"""

from __future__ import annotations

from types import SimpleNamespace

import fake_nvml
import pytest

from doctor.facts.nvml import gather_nvml
from doctor.facts.nvml.binding import LOST, MISSING, REFUSED, TRANSIENT, error_kind
from doctor.facts.sampling.sampler import Sampler
from doctor.model.plausible import scrub
from doctor.model.unknown import Unknown


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def sample(m, ticks: int = 4, between=None):
    """The sampler's series over `ticks` ticks of 0.2 s; `between(i)` runs before tick i."""
    clock = Clock()
    sampler = Sampler([0], nvml_module=m, clock=clock).start(background=False)
    for i in range(ticks):
        if between:
            between(i)
        clock.t += 0.2
        sampler.tick()
    clock.t += 0.2
    return sampler.stop().gpu(0)


def test_a_reading_not_supported_is_unknown_in_the_snapshot_none_in_samples_and_asked_once():
    def no_temperature(h, sensor):
        raise fake_nvml.NVMLError("Not Supported", fake_nvml.NOT_SUPPORTED)

    snap = fake_nvml.sampled_v100()
    snap.nvmlDeviceGetTemperature = no_temperature
    g = gather_nvml(snap).gpus[0]
    assert g.temperature_c == Unknown("nvmlDeviceGetTemperature: Not Supported")

    m = fake_nvml.sampled_v100()
    m.nvmlDeviceGetTemperature = no_temperature
    calls = fake_nvml.counting(m)
    series = sample(m, ticks=5)
    assert all(s.temperature_c is None for s in series.samples) and series.samples[0].sm_clock_mhz == 1380
    assert series.unavailable["temperature_c"] == g.temperature_c.reason  # one reader, one reason
    assert calls["nvmlDeviceGetTemperature"] == 1  # refused once, never asked again
    assert calls["nvmlDeviceGetClockInfo"] == 2 * 5  # SM and memory clock, every tick


def test_a_busy_driver_is_asked_again_and_not_reported_as_missing():
    m = fake_nvml.sampled_v100()
    answers = iter([fake_nvml.NVMLError("Timeout", fake_nvml.TIMEOUT), 231500, 231500, 231500])

    def power(h):
        a = next(answers)
        if isinstance(a, Exception):
            raise a
        return a

    m.nvmlDeviceGetPowerUsage = power
    series = sample(m, ticks=3)  # the static read takes no power reading: the first tick meets the timeout
    assert [s.power_w for s in series.samples] == [None, 231.5, 231.5]
    assert "power_draw_w" not in series.unavailable


@pytest.mark.parametrize("call, fake, reading", [
    ("nvmlDeviceGetClockInfo", lambda h, t: (1 << 32) - 1, "sm_clock_mhz"),  # NVML_VALUE_NOT_AVAILABLE, 32 bits
    ("nvmlDeviceGetTemperature", lambda h, t: float("nan"), "temperature_c"),
    ("nvmlDeviceGetCurrPcieLinkWidth", lambda h: 0, "pcie_width"),
    ("nvmlDeviceGetPowerUsage", lambda h: (1 << 64) - 1, "power_draw_w"),
])
def test_a_sentinel_is_caught_once_with_the_same_reason_in_both_paths(call, fake, reading):
    m = fake_nvml.sampled_v100()
    setattr(m, call, fake)
    value = getattr(gather_nvml(m).gpus[0], reading)
    assert isinstance(value, Unknown) and value.reason.startswith(f"recorded by NVML: {reading} ")
    m = fake_nvml.sampled_v100()
    setattr(m, call, fake)
    series = sample(m)
    assert series.unavailable[reading] == value.reason
    sample_field = {"power_draw_w": "power_w"}.get(reading, reading)
    assert all(getattr(s, sample_field) is None for s in series.samples)


def test_a_sentinel_mask_is_not_decoded_into_every_reason():
    m = fake_nvml.v100()
    m.nvmlDeviceGetCurrentClocksThrottleReasons = lambda h: (1 << 64) - 1
    g = gather_nvml(m).gpus[0]
    assert isinstance(g.clocks_event_mask, Unknown) and g.clocks_event_reasons == g.clocks_event_mask
    m = fake_nvml.sampled_v100()
    m.nvmlDeviceGetCurrentClocksThrottleReasons = lambda h: (1 << 64) - 1
    assert all(s.reasons is None for s in sample(m).samples)


def test_every_number_is_range_checked_where_it_enters():
    """After the reader, the model's scrub finds nothing left to catch: every sentinel became Unknown at once."""
    n32, n64 = (1 << 32) - 1, (1 << 64) - 1
    m = fake_nvml.v100()
    keep = {"nvmlDeviceGetHandleByIndex", "nvmlDeviceGetCount", "nvmlDeviceGetName", "nvmlDeviceGetUUID",
            "nvmlDeviceGetSerial", "nvmlDeviceGetPciInfo", "nvmlDeviceGetCudaComputeCapability", "nvmlDeviceGetEccMode",
            "nvmlDeviceGetRetiredPages"}
    for name in dir(m):
        if name.startswith("nvmlDevice") and name not in keep:
            setattr(m, name, lambda *a: n64)
    m.nvmlDeviceGetMemoryInfo = lambda h: SimpleNamespace(total=n64, free=n64, used=-335609856)
    m.nvmlDeviceGetUtilizationRates = lambda h: SimpleNamespace(gpu=n32, memory=float("nan"))
    m.nvmlDeviceGetRemappedRows = lambda h: (n64, -1, 0, 1)
    m.nvmlDeviceGetComputeRunningProcesses = lambda h: [SimpleNamespace(pid=1, usedGpuMemory=n64)]
    m.nvmlDeviceGetCudaComputeCapability = lambda h: (70, 123)
    facts = gather_nvml(m)
    assert scrub(facts, "by NVML: ") == facts
    g = facts.gpus[0]
    numbers = ("memory_total_mib", "memory_free_mib", "memory_used_mib", "sm_clock_mhz", "mem_clock_max_mhz",
               "clocks_event_mask", "temperature_c", "slowdown_temperature_c", "power_draw_w", "power_limit_w",
               "utilization_gpu_pct", "utilization_memory_pct", "pcie_gen", "pcie_width_max", "memory_bus_width_bits",
               "ecc_uncorrected_volatile", "remapped_rows_correctable", "remapped_rows_uncorrectable",
               "compute_capability")
    for field in numbers:
        value = getattr(g, field)
        assert isinstance(value, Unknown) and value.reason.startswith(f"recorded by NVML: {field} "), (field, value)
    assert isinstance(g.processes[0].used_mib, Unknown)


def test_a_gpu_lost_mid_run_ends_its_readings_at_once_in_both_paths():
    # the snapshot: lost at its first reading (memory); every later one carries that reason, NVML is not asked again
    m = fake_nvml.v100()
    asked_after_loss: list = []

    def memory(h):
        asked_after_loss.append(fake_nvml.lose_gpu(m))  # from here on, every device call fails
        raise fake_nvml.NVMLError("GPU is lost", fake_nvml.GPU_IS_LOST)

    m.nvmlDeviceGetMemoryInfo = memory
    g = gather_nvml(m).gpus[0]
    assert g.memory_total_mib == Unknown("nvmlDeviceGetMemoryInfo: GPU is lost")
    assert g.power_draw_w == g.memory_total_mib and g.processes == g.memory_total_mib
    assert asked_after_loss == [[]]

    # the sampler: two good ticks, then the loss; one failed call, then nothing more is asked of the GPU
    m = fake_nvml.sampled_v100()
    series = sample(m, ticks=5, between=lambda i: i == 2 and asked_after_loss.append(fake_nvml.lose_gpu(m)))
    assert [s.sm_clock_mhz for s in series.samples] == [1380, 1380, None, None, None]
    assert series.unavailable["device"] == "nvmlDeviceGetCurrentClocksEventReasons: GPU is lost"
    assert len(asked_after_loss[-1]) == 1
    assert series.counters.unavailable["energy"] == series.unavailable["device"]


def test_old_binding_names_are_used_where_the_new_ones_are_missing_in_both_paths():
    """fake_nvml.v100 is an old binding (nvmlDeviceGetCurrentClocksThrottleReasons only)."""
    g = gather_nvml(fake_nvml.v100()).gpus[0]
    assert g.clocks_event_reasons == ("sw_thermal_slowdown", "hw_thermal_slowdown")
    series = sample(fake_nvml.sampled_v100())
    assert series.samples[0].reasons == ("sw_thermal_slowdown", "hw_thermal_slowdown")


def test_a_new_binding_on_an_old_driver_falls_back_to_the_old_symbols_and_pins_them():
    """nvidia-ml-py 12 on R470: the new names exist but the driver lacks their symbols (FunctionNotFound)."""
    facts = gather_nvml(fake_nvml.new_binding_on_old_driver())
    g = facts.gpus[0]
    assert g.clocks_event_reasons == ("sw_thermal_slowdown", "hw_thermal_slowdown")
    assert [(p.pid, p.used_mib) for p in g.processes] == [(4242, 2048.0)]
    assert facts.cuda_driver_version == "11.4"

    m = fake_nvml.new_binding_on_old_driver()
    calls = fake_nvml.counting(m)
    series = sample(m, ticks=4)
    assert all(s.reasons == ("sw_thermal_slowdown", "hw_thermal_slowdown") for s in series.samples)
    assert [(p.pid, p.used_mib) for p in series.samples[-1].processes] == [(4242, 2048.0)]
    assert calls["nvmlDeviceGetCurrentClocksEventReasons"] == 1  # tried once, then the old name is pinned
    assert calls["nvmlDeviceGetCurrentClocksThrottleReasons"] == 4
    assert "clocks_event_mask" not in series.unavailable


def test_a_function_in_neither_binding_nor_driver_is_unknown_with_the_reason():
    m = fake_nvml.v100()
    del m.nvmlDeviceGetCurrentClocksThrottleReasons
    g = gather_nvml(m).gpus[0]
    assert g.clocks_event_mask == Unknown("nvmlDeviceGetCurrentClocksEventReasons is not in this nvidia-ml-py version")


def test_nvml_is_shut_down_once_for_each_init_whoever_opened_it():
    events: list = []
    m = fake_nvml.sampled_v100()
    m.nvmlInit, m.nvmlShutdown = (lambda: events.append("init")), (lambda: events.append("shutdown"))
    sampler = Sampler([0], nvml_module=m).start(background=False)
    gather_nvml(m)  # a snapshot while the sampler holds NVML open
    sampler.stop()
    sampler.stop()
    assert events == ["init", "init", "shutdown", "shutdown"]

    failing = fake_nvml.library_missing()
    failing.nvmlShutdown = lambda: events.append("shutdown of a library that never started")
    gather_nvml(failing)
    Sampler([0], nvml_module=failing).start(background=False).stop()
    assert events == ["init", "init", "shutdown", "shutdown"]


def test_both_paths_say_the_same_when_nvml_cannot_start():
    facts = gather_nvml(fake_nvml.driver_mismatch())
    series_reason = Sampler([0], nvml_module=fake_nvml.driver_mismatch()).start(background=False).stop().nvml_reason
    assert not facts.available and facts.reason == series_reason and "reboot" in series_reason


@pytest.mark.parametrize("exc, kind", [
    (fake_nvml.NVMLError("Not Supported", 3), REFUSED),
    (fake_nvml.NVMLError("Insufficient Permissions", 4), REFUSED),
    (fake_nvml.NVMLError("Function Not Found", 13), MISSING),
    (fake_nvml.NVMLError("Unversioned function called and the pyNVML version does not match the NVML lib version."),
     MISSING),
    (fake_nvml.NVMLError("GPU is lost", 15), LOST),
    (fake_nvml.NVMLError("GPU is lost"), LOST),  # no code: by its words
    (fake_nvml.NVMLError("Timeout", 10), TRANSIENT),
    (fake_nvml.NVMLError("In use by another client", 19), TRANSIENT),
    (RuntimeError("anything else"), REFUSED),
])
def test_error_kinds(exc, kind):
    assert error_kind(exc) == kind
