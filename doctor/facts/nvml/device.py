"""One GPU as NVML reports it: one method per reading, each a value or Unknown(reason); the readings that are one
NVML call and a number are declared as rows (Reading) and called like the others.

The snapshot (doctor/facts/nvml/snapshot.py) and the sampler (doctor/facts/sampling) both read a GPU
through this class, so both ask NVML the same way:
- a reading the driver refuses (not supported, no permission, not in this binding) is remembered and not
  asked again, so an old card costs one failed call per reading, not one per tick; a busy or timed-out
  driver is asked again next time;
- a GPU that is lost (fallen off the bus) ends every reading of it at once, with the reason (`gone`);
- every number is range-checked as it enters, in `check` (the ranges: doctor/model/plausible.py): NVML's
  "not available" sentinels, NaN or a negative size become Unknown("recorded by NVML: <reading> ...");
- `unavailable` keeps the first reason for each reading that was refused or implausible.
"""

from __future__ import annotations

from typing import Any, Callable, Generic, NamedTuple, TypeVar

from doctor.facts.nvml.binding import LOST, TRANSIENT, Binding, NvmlRefused, text
from doctor.model.plausible import problem, range_of
from doctor.model.units import MIB
from doctor.model.unknown import Maybe, Unknown

NOT_REPORTED = "not reported (no permission or MIG)"


class Memory(NamedTuple):
    total_mib: Maybe[float]
    free_mib: Maybe[float]
    used_mib: Maybe[float]


class Utilization(NamedTuple):
    gpu_pct: Maybe[int]
    memory_pct: Maybe[int]


class ProcessOnGpu(NamedTuple):
    pid: int
    used_mib: Maybe[float]
    kind: str  # compute | graphics


def checked(reading: str, value: Any) -> Any:
    """`value` where it can be the number `reading`, else Unknown saying why."""
    if type(value) is int or type(value) is float:  # the common case, at every tick: one comparison (NaN fails it)
        low, high = range_of(reading)
        if low <= value <= high:
            return value
    if isinstance(value, Unknown):
        return value
    if not isinstance(value, (int, float)):
        return Unknown(f"recorded by NVML: {reading} {str(value)[:40]!r} is not a number")
    why = problem(reading, value)
    return value if why is None else Unknown(f"recorded by NVML: {reading} {why}")


T = TypeVar("T")


def _watts(milliwatts: float) -> float:
    return milliwatts / 1000


class Reading(Generic[T]):
    """A reading that is one NVML call and a number: Device.number with the binding's constants named.

    Declared on Device as a row (`pcie_gen = Reading[int]("nvmlDeviceGetCurrPcieLinkGeneration")`) and read like
    its methods (`device.pcie_gen()`); the reading is named after the attribute.
    """

    def __init__(self, nvml_call: str, *consts: str, unit: Callable[[Any], Any] | None = None):
        self.nvml_call = nvml_call
        self.consts = consts  # names of NVML constants passed after the handle, looked up in the binding
        self.unit = unit  # converts NVML's unit to the doctor's
        self.reading = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.reading = name

    def __get__(self, device: Device, owner: type | None = None) -> Callable[[], Maybe[T]]:
        def read() -> Maybe[T]:
            consts = [device.binding.const(c) for c in self.consts]
            return device.number(self.reading, self.nvml_call, *consts, unit=self.unit)

        return read


class Device:
    """One GPU of an open NvmlSession (NvmlSession.device(index)); never raises for what NVML refuses."""

    def __init__(self, binding: Binding, index: int):
        self.binding = binding
        self.index = index
        self.unavailable: dict[str, str] = {}  # reading -> why it was refused or implausible (first reason)
        self.gone: Unknown | None = None  # why nothing more can be read: no handle, or the GPU was lost
        self._refused: dict[str, Unknown] = {}
        try:
            self.handle: Any = binding.call("nvmlDeviceGetHandleByIndex", index)
        except NvmlRefused as r:
            self.handle = None
            self._lose(Unknown(r.reason))

    @property
    def readable(self) -> bool:
        return self.gone is None

    # -- the three ways in: one call, a remembered reading, a range check ---------------------------
    def call(self, name: str, *args: Any) -> Any:
        """One NVML call on this GPU, not remembered (counters, per-link and per-peer calls)."""
        if self.gone is not None:
            return self.gone
        try:
            return self.binding.call(name, self.handle, *args)
        except NvmlRefused as r:
            if r.kind == LOST:
                self._lose(Unknown(r.reason))
            return Unknown(r.reason)

    def read(self, reading: str, name: str, *args: Any) -> Any:
        """NVML's raw answer for `reading`, or Unknown; a refusal is remembered and not asked again."""
        if self.gone is not None:
            return self.gone
        refused = self._refused.get(reading)
        if refused is not None:
            return refused
        try:
            return self.binding.call(name, self.handle, *args)
        except NvmlRefused as r:
            if r.kind == LOST:
                self._lose(Unknown(r.reason))
                return self.gone
            if r.kind == TRANSIENT:
                return Unknown(r.reason)
            return self.refuse(reading, r.reason)

    def refuse(self, reading: str, reason: str) -> Unknown:
        """Mark `reading` as not offered here: it is not asked again, and the reason is kept."""
        unknown = self._refused[reading] = Unknown(reason)
        self.unavailable.setdefault(reading, reason)
        return unknown

    def check(self, reading: str, value: Any) -> Any:
        """`value` if it can be the number `reading`; else Unknown, and the first such reason is kept."""
        out = checked(reading, value)
        if out is not value:
            self.unavailable.setdefault(reading, out.reason)
        return out

    def number(self, reading: str, name: str, *args: Any, unit: Callable[[Any], Any] | None = None) -> Any:
        """A numeric reading in the doctor's unit (`unit` converts NVML's), range-checked."""
        value = self.read(reading, name, *args)
        if unit is not None and isinstance(value, (int, float)):
            value = unit(value)
        return self.check(reading, value)

    def _lose(self, unknown: Unknown) -> None:
        self.gone = unknown
        self.unavailable.setdefault("device", unknown.reason)

    # -- what a GPU is -------------------------------------------------------------------------------
    def name(self) -> Maybe[str]:
        return mapped(self.read("name", "nvmlDeviceGetName"), text)

    def uuid(self) -> Maybe[str]:
        return mapped(self.read("uuid", "nvmlDeviceGetUUID"), text)

    def serial(self) -> Maybe[str]:
        return mapped(self.read("serial", "nvmlDeviceGetSerial"), text)

    def pci_bus_id(self) -> Maybe[str]:
        return mapped(self.read("pci_bus_id", "nvmlDeviceGetPciInfo"), lambda p: text(p.busId))

    def compute_capability(self) -> Maybe[str]:
        cc = mapped(self.read("compute_capability", "nvmlDeviceGetCudaComputeCapability"), lambda c: f"{c[0]}.{c[1]}")
        why = problem("compute_capability", cc)
        return cc if why is None else Unknown(f"recorded by NVML: compute_capability {why}")

    memory_bus_width_bits = Reading[int]("nvmlDeviceGetMemoryBusWidth")

    # -- memory, clocks, temperatures, power, PCIe link ------------------------------------------------
    def memory(self) -> Memory:
        m = self.read("memory", "nvmlDeviceGetMemoryInfo")
        if isinstance(m, Unknown):
            return Memory(m, m, m)
        mib = [self.check(f"memory_{k}_mib", round(getattr(m, k) / MIB, 1)) for k in ("total", "free", "used")]
        return Memory(*mib)

    sm_clock_mhz = Reading[int]("nvmlDeviceGetClockInfo", "NVML_CLOCK_SM")
    sm_clock_max_mhz = Reading[int]("nvmlDeviceGetMaxClockInfo", "NVML_CLOCK_SM")
    mem_clock_mhz = Reading[int]("nvmlDeviceGetClockInfo", "NVML_CLOCK_MEM")
    mem_clock_max_mhz = Reading[int]("nvmlDeviceGetMaxClockInfo", "NVML_CLOCK_MEM")
    # the clocks-event (throttle) reason bits; decode with binding.decode_clocks_event_mask
    clocks_event_mask = Reading[int]("nvmlDeviceGetCurrentClocksEventReasons")
    temperature_c = Reading[int]("nvmlDeviceGetTemperature", "NVML_TEMPERATURE_GPU")
    slowdown_temperature_c = Reading[int]("nvmlDeviceGetTemperatureThreshold", "NVML_TEMPERATURE_THRESHOLD_SLOWDOWN")
    shutdown_temperature_c = Reading[int]("nvmlDeviceGetTemperatureThreshold", "NVML_TEMPERATURE_THRESHOLD_SHUTDOWN")
    max_operating_temperature_c = Reading[int]("nvmlDeviceGetTemperatureThreshold", "NVML_TEMPERATURE_THRESHOLD_GPU_MAX")
    memory_max_temperature_c = Reading[int]("nvmlDeviceGetTemperatureThreshold", "NVML_TEMPERATURE_THRESHOLD_MEM_MAX")

    def memory_temperature_c(self) -> Maybe[int]:
        """HBM temperature, from the field-value API (NVML_FI_DEV_MEMORY_TEMP); GDDR cards do not report it."""
        values = self.read("memory_temperature_c", "nvmlDeviceGetFieldValues",
                           [self.binding.const("NVML_FI_DEV_MEMORY_TEMP")])
        if isinstance(values, Unknown):
            return values
        try:
            v = values[0]
            if getattr(v, "nvmlReturn", 0) != 0:
                return self.refuse("memory_temperature_c", "memory temperature is not reported by this GPU")
            return self.check("memory_temperature_c", int(getattr(v.value, "uiVal", v.value)))
        except Exception as exc:
            return self.refuse("memory_temperature_c", f"memory temperature unreadable: {exc}")

    power_draw_w = Reading[float]("nvmlDeviceGetPowerUsage", unit=_watts)
    power_limit_w = Reading[float]("nvmlDeviceGetEnforcedPowerLimit", unit=_watts)
    power_default_limit_w = Reading[float]("nvmlDeviceGetPowerManagementDefaultLimit", unit=_watts)

    def utilization(self) -> Utilization:
        u = self.read("utilization", "nvmlDeviceGetUtilizationRates")
        if isinstance(u, Unknown):
            return Utilization(u, u)
        return Utilization(self.check("utilization_gpu_pct", u.gpu), self.check("utilization_memory_pct", u.memory))

    pcie_gen = Reading[int]("nvmlDeviceGetCurrPcieLinkGeneration")
    pcie_gen_max = Reading[int]("nvmlDeviceGetMaxPcieLinkGeneration")
    pcie_width = Reading[int]("nvmlDeviceGetCurrPcieLinkWidth")
    pcie_width_max = Reading[int]("nvmlDeviceGetMaxPcieLinkWidth")

    # -- PCIe traffic (the sampler's; see doctor/facts/sampling/pcie_meter.py) ------------------------
    def pcie_throughput_mbs(self, direction: str) -> Maybe[float]:
        """Host->GPU ("rx") or GPU->host ("tx") MB/s over NVML's ~20 ms window (it reports KB/s)."""
        const = self.binding.const("NVML_PCIE_UTIL_RX_BYTES" if direction == "rx" else "NVML_PCIE_UTIL_TX_BYTES")
        return self.number(f"pcie_{direction}_mbs", "nvmlDeviceGetPcieThroughput", const, unit=_mb_per_s)

    def pcie_byte_counters(self) -> tuple[int, int] | Unknown:
        """(RX, TX) bytes from NVML_FI_DEV_PCIE_COUNT_*_BYTES; they wrap at 2^32 (see pcie_meter.py)."""
        c = self.binding.const
        values = self.read("pcie_byte_counters", "nvmlDeviceGetFieldValues",
                           [c("NVML_FI_DEV_PCIE_COUNT_RX_BYTES"), c("NVML_FI_DEV_PCIE_COUNT_TX_BYTES")])
        if isinstance(values, Unknown):
            return values
        if not all(getattr(v, "nvmlReturn", 0) == 0 for v in values):
            return self.refuse("pcie_byte_counters", "PCIe byte counters are not offered by this GPU/driver")
        return int(values[0].value.ullVal), int(values[1].value.ullVal)

    # -- who holds the GPU ---------------------------------------------------------------------------
    def processes(self) -> tuple[ProcessOnGpu, ...] | Unknown:
        """Compute and graphics processes, each pid once (a process with both contexts counts as compute)."""
        compute = self.read("processes", "nvmlDeviceGetComputeRunningProcesses")
        if isinstance(compute, Unknown):
            return compute
        graphics = self.read("graphics_processes", "nvmlDeviceGetGraphicsRunningProcesses")
        seen: dict[int, ProcessOnGpu] = {}
        for kind, procs in (("compute", compute), ("graphics", () if isinstance(graphics, Unknown) else graphics)):
            for p in procs:
                pid = int(p.pid)
                if pid not in seen:
                    used = getattr(p, "usedGpuMemory", None)
                    mib = round(used / MIB, 1) if isinstance(used, int) else Unknown(NOT_REPORTED)
                    seen[pid] = ProcessOnGpu(pid, self.check("used_mib", mib), kind)
        return tuple(seen.values())


def mapped(value: Any, fn: Callable[[Any], Any]) -> Any:
    """fn(value) for a value NVML gave, the Unknown itself otherwise."""
    return value if isinstance(value, Unknown) else fn(value)


def _mb_per_s(kb_per_s: float) -> float:
    return kb_per_s * 1024 / 1e6  # nvmlDeviceGetPcieThroughput reports KB/s (1024 B)
