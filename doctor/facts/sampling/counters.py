"""Cumulative driver counters, read at the start and the end of a window.

Sampling at 5 Hz can miss short throttle episodes; the driver's own accumulators cannot.
What nvidia-ml-py 13.x exposes and this module reads:
  - nvmlDeviceGetViolationStatus(policy): nanoseconds the clocks were held below the requested
    level by each perf policy (power, thermal, sync boost, board limit, low utilisation,
    reliability). The policy enum is stable across binding versions.
  - nvmlDeviceGetTotalEnergyConsumption: millijoules since the driver loaded (Volta and newer).
PCIe bytes are not read here: their counters wrap at 2^32 bytes, so they are unwrapped tick by
tick in doctor/facts/sampling/pcie_meter.py and their sum is added to the window's counters.
Deliberately not read: the NVML_FI_DEV_CLOCKS_EVENT_REASON_{SW_THERM,HW_THERM,HW_POWER_BRAKE}
field ids. Published headers disagree on their numbers (251-253 in one CUDA 13 header, 269-271
in nvidia-ml-py 13.615, where other drivers use 269-271 for power-smoothing fields), so reading
them could return an unrelated value. The violation policies cover power and thermal without
that risk; HW slowdown and power brake are seen in the sampled reasons instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from doctor.facts.nvml.device import Device
from doctor.model.samples import WindowCounters
from doctor.model.unknown import Unknown

# policy name -> its nvmlPerfPolicyType_t constant (value: doctor/facts/nvml/binding.py CONSTANTS)
POLICIES: dict[str, str] = {
    "power": "NVML_PERF_POLICY_POWER",
    "thermal": "NVML_PERF_POLICY_THERMAL",
    "sync_boost": "NVML_PERF_POLICY_SYNC_BOOST",
    "board_limit": "NVML_PERF_POLICY_BOARD_LIMIT",
    "low_utilization": "NVML_PERF_POLICY_LOW_UTILIZATION",
    "reliability": "NVML_PERF_POLICY_RELIABILITY",
}


@dataclass
class CounterSnapshot:
    t_s: float
    values: dict[str, int] = field(default_factory=dict)  # counter -> raw cumulative value
    unavailable: dict[str, str] = field(default_factory=dict)


def read_counters(device: Device, t_s: float) -> CounterSnapshot:
    """The counters now; each is one call (Device.call), kept apart from the samples' unavailable readings."""
    snap = CounterSnapshot(t_s=t_s)
    for name, const in POLICIES.items():
        v = device.call("nvmlDeviceGetViolationStatus", device.binding.const(const))
        if isinstance(v, Unknown):
            snap.unavailable[f"throttle_{name}"] = v.reason
        else:
            snap.values[f"throttle_{name}"] = int(v.violationTime)
    energy = device.call("nvmlDeviceGetTotalEnergyConsumption")
    if isinstance(energy, Unknown):
        snap.unavailable["energy"] = energy.reason
    else:
        snap.values["energy"] = int(energy)
    return snap


def window_counters(start: CounterSnapshot, end: CounterSnapshot, pcie: tuple[int, int, float] | None = None) -> WindowCounters:
    """Deltas between two snapshots; a counter that went backwards (driver reload) is unavailable.
    `pcie` is (rx bytes, tx bytes, seconds counted) summed tick by tick by the PCIe meter."""
    unavailable = {**start.unavailable, **end.unavailable}
    deltas: dict[str, int] = {}
    for key, before in start.values.items():
        after = end.values.get(key)
        if after is None:
            continue
        if after < before:
            unavailable[key] = "counter went backwards during the window (wrapped or driver reloaded)"
        else:
            deltas[key] = after - before
    throttle = {k[len("throttle_"):]: round(v / 1e9, 3) for k, v in deltas.items() if k.startswith("throttle_")}
    return WindowCounters(
        window_s=round(end.t_s - start.t_s, 3),
        throttle_s=throttle,
        energy_j=round(deltas["energy"] / 1000, 1) if "energy" in deltas else None,
        pcie_rx_bytes=pcie[0] if pcie else None,
        pcie_tx_bytes=pcie[1] if pcie else None,
        pcie_counted_s=round(pcie[2], 3) if pcie else None,
        unavailable=unavailable,
    )
