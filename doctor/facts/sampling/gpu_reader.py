"""Per-tick NVML readings for one GPU, through the tolerant Nvml wrapper of doctor/facts/nvml.py.

A reading that the driver refuses once is remembered as unavailable and not asked again, so an
old card or driver costs one failed call per reading, not one per tick.
"""

from __future__ import annotations

from typing import Any

from doctor.facts.nvml import Nvml, decode_clocks_event_mask
from doctor.model.plausible import dropping
from doctor.model.units import MIB
from doctor.facts.sampling.pcie_meter import PcieMeter
from doctor.model.samples import GpuProcessUse, GpuSample, GpuSeries
from doctor.model.unknown import Unknown


class GpuReader:
    def __init__(self, nvml: Nvml, index: int):
        self.n = nvml
        self.index = index
        self.unavailable: dict[str, str] = {}
        self.handle = nvml.call("nvmlDeviceGetHandleByIndex", index)
        if isinstance(self.handle, Unknown):
            self.unavailable["device"] = self.handle.reason
        c = nvml.const
        self._sm, self._mem = c("NVML_CLOCK_SM", 1), c("NVML_CLOCK_MEM", 2)
        self._rx, self._tx = c("NVML_PCIE_UTIL_RX_BYTES", 1), c("NVML_PCIE_UTIL_TX_BYTES", 0)
        self._temp_gpu = c("NVML_TEMPERATURE_GPU", 0)
        self.pcie = PcieMeter(self._get, self._rx, self._tx, self.unavailable)
        self._mem_temp_field = getattr(nvml.m, "NVML_FI_DEV_MEMORY_TEMP", None)
        if self._mem_temp_field is None:
            self.unavailable["memory_temperature_c"] = "NVML_FI_DEV_MEMORY_TEMP is not in this nvidia-ml-py version"

    @property
    def ok(self) -> bool:
        return not isinstance(self.handle, Unknown)

    def _get(self, key: str, name: str, *args: Any, alt: str | None = None) -> Any:
        """One reading, or None; the first refusal marks the reading unavailable for the rest of the window."""
        if key in self.unavailable:
            return None
        value = self.n.call(name, self.handle, *args, alt=alt)
        if isinstance(value, Unknown):
            if _is_transient(value.reason):
                return None
            self.unavailable[key] = value.reason
            return None
        return value

    def static(self) -> GpuSeries:
        """The limits the samples are compared against."""
        if not self.ok:
            return GpuSeries(index=self.index, unavailable=dict(self.unavailable))
        thr = lambda key, const, dflt: self._get(key, "nvmlDeviceGetTemperatureThreshold", self.n.const(const, dflt))
        mw = lambda key, name: _scale(self._get(key, name), 1 / 1000)
        mem = self._get("memory_total_mib", "nvmlDeviceGetMemoryInfo")
        name = self._get("name", "nvmlDeviceGetName")
        return dropping(GpuSeries(
            index=self.index,
            name=name.decode() if isinstance(name, bytes) else name,
            sm_clock_max_mhz=self._get("sm_clock_max_mhz", "nvmlDeviceGetMaxClockInfo", self._sm),
            mem_clock_max_mhz=self._get("mem_clock_max_mhz", "nvmlDeviceGetMaxClockInfo", self._mem),
            power_limit_w=mw("power_limit_w", "nvmlDeviceGetEnforcedPowerLimit"),
            power_default_limit_w=mw("power_default_limit_w", "nvmlDeviceGetPowerManagementDefaultLimit"),
            slowdown_temperature_c=thr("slowdown_temperature_c", "NVML_TEMPERATURE_THRESHOLD_SLOWDOWN", 1),
            max_operating_temperature_c=thr("max_operating_temperature_c", "NVML_TEMPERATURE_THRESHOLD_GPU_MAX", 3),
            memory_max_temperature_c=thr("memory_max_temperature_c", "NVML_TEMPERATURE_THRESHOLD_MEM_MAX", 2),
            pcie_gen_max=self._get("pcie_gen_max", "nvmlDeviceGetMaxPcieLinkGeneration"),
            pcie_width_max=self._get("pcie_width_max", "nvmlDeviceGetMaxPcieLinkWidth"),
            memory_total_mib=round(mem.total / MIB, 1) if mem is not None else None,
        ), self.unavailable, "by NVML: ")

    def sample(self, t_s: float) -> GpuSample:
        if not self.ok:
            return GpuSample(t_s=t_s)
        mask = self._get("reasons", "nvmlDeviceGetCurrentClocksEventReasons",
                         alt="nvmlDeviceGetCurrentClocksThrottleReasons")
        util = self._get("utilization", "nvmlDeviceGetUtilizationRates")
        mem = self._get("memory_used_mib", "nvmlDeviceGetMemoryInfo")
        rx, tx = self.pcie.read(t_s)
        return dropping(GpuSample(  # NVML's "not available" sentinels, NaN: None, the reason kept once
            t_s=round(t_s, 3),
            sm_clock_mhz=self._get("sm_clock_mhz", "nvmlDeviceGetClockInfo", self._sm),
            mem_clock_mhz=self._get("mem_clock_mhz", "nvmlDeviceGetClockInfo", self._mem),
            reasons=decode_clocks_event_mask(mask) if mask is not None else None,
            temperature_c=self._get("temperature_c", "nvmlDeviceGetTemperature", self._temp_gpu),
            memory_temperature_c=self._memory_temperature(),
            power_w=_scale(self._get("power_w", "nvmlDeviceGetPowerUsage"), 1 / 1000, 1),
            util_gpu_pct=util.gpu if util is not None else None,
            util_mem_pct=util.memory if util is not None else None,
            pcie_rx_mbs=rx,
            pcie_tx_mbs=tx,
            pcie_gen=self._get("pcie_gen", "nvmlDeviceGetCurrPcieLinkGeneration"),
            pcie_width=self._get("pcie_width", "nvmlDeviceGetCurrPcieLinkWidth"),
            memory_used_mib=round(mem.used / MIB, 1) if mem is not None else None,
            processes=self._processes(),
        ), self.unavailable, "by NVML: ")

    def _memory_temperature(self) -> int | None:
        values = self._get("memory_temperature_c", "nvmlDeviceGetFieldValues", [self._mem_temp_field])
        if values is None:
            return None
        v = values[0]
        if getattr(v, "nvmlReturn", 0) != 0:
            self.unavailable["memory_temperature_c"] = "memory temperature is not reported by this GPU"
            return None
        return int(getattr(v.value, "uiVal", v.value))

    def _processes(self) -> tuple[GpuProcessUse, ...] | None:
        compute = self._get("processes", "nvmlDeviceGetComputeRunningProcesses")
        if compute is None:
            return None
        graphics = self._get("graphics_processes", "nvmlDeviceGetGraphicsRunningProcesses") or []
        seen: dict[int, GpuProcessUse] = {}
        for p in list(compute) + list(graphics):
            used = getattr(p, "usedGpuMemory", None)
            seen.setdefault(int(p.pid), GpuProcessUse(pid=int(p.pid),
                                                      used_mib=round(used / MIB, 1) if isinstance(used, int) else None))
        return tuple(seen.values())


def _scale(value: Any, factor: float, digits: int = 1) -> float | None:
    return None if value is None else round(value * factor, digits)


def _is_transient(reason: str) -> bool:
    """A busy or timed-out driver is worth asking again next tick; NotSupported/NoPermission are not."""
    low = reason.lower()
    return "timeout" in low or "busy" in low or "in use" in low
