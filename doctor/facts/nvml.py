"""One tolerant NVML wrapper: every call on its own, every failure becomes Unknown.

Missing libnvidia-ml.so, a driver/library mismatch and "no GPU" are facts, not crashes.
The pynvml module is injectable so tests can drive each failure mode.
"""

from __future__ import annotations

from typing import Any, Callable

from doctor.model.facts import GpuFacts, GpuLink, GpuProcess, NvmlFacts
from doctor.model.plausible import scrub
from doctor.model.unknown import Unknown
from doctor.model.units import MIB


# Clocks-event (throttle) reason bits: pynvml's own constants where the binding has them (newer bindings
# call them nvmlClocksEventReason*, older nvmlClocksThrottleReason*), else nvml.h's values, which are the same.
_REASON_NAMES: dict[str, tuple[str, int]] = {
    "gpu_idle": ("GpuIdle", 0x1), "applications_clocks_setting": ("ApplicationsClocksSetting", 0x2),
    "sw_power_cap": ("SwPowerCap", 0x4), "hw_slowdown": ("HwSlowdown", 0x8), "sync_boost": ("SyncBoost", 0x10),
    "sw_thermal_slowdown": ("SwThermalSlowdown", 0x20), "hw_thermal_slowdown": ("HwThermalSlowdown", 0x40),
    "hw_power_brake_slowdown": ("HwPowerBrakeSlowdown", 0x80), "display_clock_setting": ("DisplayClockSetting", 0x100),
}


def _reason_bits() -> dict[int, str]:
    try:
        import pynvml
    except ImportError:  # the gatherer reports the missing binding itself; the bits stay nvml.h's
        pynvml = None
    out = {}
    for name, (suffix, fallback) in _REASON_NAMES.items():
        bit = next((getattr(pynvml, p + suffix) for p in ("nvmlClocksEventReason", "nvmlClocksThrottleReason")
                    if pynvml is not None and isinstance(getattr(pynvml, p + suffix, None), int)), fallback)
        out[int(bit)] = name
    return out


CLOCKS_EVENT_BITS: dict[int, str] = _reason_bits()


def decode_clocks_event_mask(mask: int) -> tuple[str, ...]:
    return tuple(name for bit, name in CLOCKS_EVENT_BITS.items() if mask & bit)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class Nvml:
    """Calls into pynvml, turning every exception into Unknown with the NVML error text."""

    def __init__(self, module: Any):
        self.m = module

    def call(self, name: str, *args: Any, alt: str | None = None) -> Any:
        fn = getattr(self.m, name, None) or (getattr(self.m, alt, None) if alt else None)
        if fn is None:
            return Unknown(f"{name} is not in this nvidia-ml-py version")
        try:
            return fn(*args)
        except Exception as exc:  # NVMLError_NotSupported, NoPermission, GpuIsLost ...
            return Unknown(f"{name}: {_text(exc) or type(exc).__name__}")

    def const(self, name: str, default: int) -> int:
        return getattr(self.m, name, default)


def _map(value: Any, fn: Callable[[Any], Any]) -> Any:
    return value if isinstance(value, Unknown) else fn(value)


def _gpu(n: Nvml, index: int) -> GpuFacts:
    h = n.call("nvmlDeviceGetHandleByIndex", index)
    if isinstance(h, Unknown):
        return GpuFacts(index=index, name=h)
    cc = n.call("nvmlDeviceGetCudaComputeCapability", h)
    mem = n.call("nvmlDeviceGetMemoryInfo", h)
    clk = lambda which, typ: n.call(which, h, n.const(typ, {"NVML_CLOCK_SM": 1, "NVML_CLOCK_MEM": 2}[typ]))
    mask = n.call("nvmlDeviceGetCurrentClocksEventReasons", h, alt="nvmlDeviceGetCurrentClocksThrottleReasons")
    temp = n.call("nvmlDeviceGetTemperature", h, n.const("NVML_TEMPERATURE_GPU", 0))
    thr = lambda typ, dflt: n.call("nvmlDeviceGetTemperatureThreshold", h, n.const(typ, dflt))
    util = n.call("nvmlDeviceGetUtilizationRates", h)
    return GpuFacts(
        index=index,
        name=_map(n.call("nvmlDeviceGetName", h), _text),
        uuid=_map(n.call("nvmlDeviceGetUUID", h), _text),
        serial=_map(n.call("nvmlDeviceGetSerial", h), _text),
        pci_bus_id=_map(n.call("nvmlDeviceGetPciInfo", h), lambda p: _text(p.busId)),
        compute_capability=_map(cc, lambda c: f"{c[0]}.{c[1]}"),
        memory_total_mib=_map(mem, lambda m: round(m.total / MIB, 1)),
        memory_free_mib=_map(mem, lambda m: round(m.free / MIB, 1)),
        memory_used_mib=_map(mem, lambda m: round(m.used / MIB, 1)),
        memory_bus_width_bits=n.call("nvmlDeviceGetMemoryBusWidth", h),
        sm_clock_mhz=clk("nvmlDeviceGetClockInfo", "NVML_CLOCK_SM"),
        sm_clock_max_mhz=clk("nvmlDeviceGetMaxClockInfo", "NVML_CLOCK_SM"),
        mem_clock_mhz=clk("nvmlDeviceGetClockInfo", "NVML_CLOCK_MEM"),
        mem_clock_max_mhz=clk("nvmlDeviceGetMaxClockInfo", "NVML_CLOCK_MEM"),
        clocks_event_mask=mask,
        clocks_event_reasons=_map(mask, decode_clocks_event_mask),
        temperature_c=temp,
        slowdown_temperature_c=thr("NVML_TEMPERATURE_THRESHOLD_SLOWDOWN", 1),
        shutdown_temperature_c=thr("NVML_TEMPERATURE_THRESHOLD_SHUTDOWN", 0),
        max_operating_temperature_c=thr("NVML_TEMPERATURE_THRESHOLD_GPU_MAX", 3),
        memory_max_temperature_c=thr("NVML_TEMPERATURE_THRESHOLD_MEM_MAX", 2),
        memory_temperature_c=_memory_temperature(n, h),
        power_draw_w=_map(n.call("nvmlDeviceGetPowerUsage", h), lambda mw: mw / 1000),
        power_limit_w=_map(n.call("nvmlDeviceGetEnforcedPowerLimit", h), lambda mw: mw / 1000),
        power_default_limit_w=_map(n.call("nvmlDeviceGetPowerManagementDefaultLimit", h), lambda mw: mw / 1000),
        utilization_gpu_pct=_map(util, lambda u: u.gpu),
        utilization_memory_pct=_map(util, lambda u: u.memory),
        pcie_gen=n.call("nvmlDeviceGetCurrPcieLinkGeneration", h),
        pcie_gen_max=n.call("nvmlDeviceGetMaxPcieLinkGeneration", h),
        pcie_width=n.call("nvmlDeviceGetCurrPcieLinkWidth", h),
        pcie_width_max=n.call("nvmlDeviceGetMaxPcieLinkWidth", h),
        processes=_processes(n, h),
        **_memory_health(n, h),
        **_mig(n, h),
    )


def _mig(n: Nvml, h: Any) -> dict[str, Any]:
    """MIG mode and the UUIDs of its instances (CUDA sees these slices, not the card)."""
    mode = n.call("nvmlDeviceGetMigMode", h)
    if isinstance(mode, Unknown):
        return {"mig_mode": mode, "mig_devices": mode}
    enabled = bool(mode[0])
    if not enabled:
        return {"mig_mode": "disabled", "mig_devices": ()}
    count = n.call("nvmlDeviceGetMaxMigDeviceCount", h)
    uuids = []
    for i in range(count if isinstance(count, int) else 0):
        mig = n.call("nvmlDeviceGetMigDeviceHandleByIndex", h, i)
        uuid = n.call("nvmlDeviceGetUUID", mig) if not isinstance(mig, Unknown) else mig
        if not isinstance(uuid, Unknown):
            uuids.append(_text(uuid))
    return {"mig_mode": "enabled", "mig_devices": tuple(uuids)}


# nvmlGpuTopologyLevel_t (nvml.h) -> the words a report uses
TOPOLOGY_LEVELS = {0: "internal", 10: "single-switch", 20: "multiple-switches", 30: "host-bridge", 40: "numa-node",
                   50: "system"}
P2P_STATUS = {0: "ok", 1: "chipset not supported", 2: "GPU not supported", 3: "IOH topology not supported",
              4: "disabled by regkey", 5: "not supported", 6: "unknown"}
NVLINK_MAX_LINKS = 18


def _nvlink_peers(n: Nvml, h: Any) -> dict[str, int]:
    """Remote PCI bus id -> active NVLink lanes from this GPU (empty on PCIe-only cards)."""
    peers: dict[str, int] = {}
    for link in range(NVLINK_MAX_LINKS):
        state = n.call("nvmlDeviceGetNvLinkState", h, link)
        if isinstance(state, Unknown):
            break  # NotSupported past the last link (or no NVLink at all)
        if not state:
            continue
        remote = n.call("nvmlDeviceGetNvLinkRemotePciInfo_v2", h, link, alt="nvmlDeviceGetNvLinkRemotePciInfo")
        if not isinstance(remote, Unknown):
            bus = _text(remote.busId).upper()
            peers[bus] = peers.get(bus, 0) + 1
    return peers


def _links(n: Nvml, handles: list[Any], gpus: tuple[GpuFacts, ...]) -> tuple[GpuLink, ...]:
    """Every pair: NVML's common ancestor, NVLink lanes between them, P2P read status."""
    if len(handles) < 2:
        return ()
    peers = [_nvlink_peers(n, h) for h in handles]
    read = n.const("NVML_P2P_CAPS_INDEX_READ", 0)
    out = []
    for a in range(len(handles)):
        for b in range(a + 1, len(handles)):
            level = n.call("nvmlDeviceGetTopologyCommonAncestor", handles[a], handles[b])
            p2p = n.call("nvmlDeviceGetP2PStatus", handles[a], handles[b], read)
            bus_b = gpus[b].pci_bus_id.upper() if isinstance(gpus[b].pci_bus_id, str) else None
            out.append(GpuLink(a=a, b=b, path=_map(level, lambda v: TOPOLOGY_LEVELS.get(int(v), f"level {v}")),
                               nvlink_lanes=peers[a].get(bus_b, 0) if bus_b else Unknown("no PCI bus id"),
                               p2p=_map(p2p, lambda v: P2P_STATUS.get(int(v), f"status {v}"))))
    return tuple(out)


def _memory_temperature(n: Nvml, h: Any) -> Any:
    field_id = getattr(n.m, "NVML_FI_DEV_MEMORY_TEMP", None)
    if field_id is None:
        return Unknown("NVML_FI_DEV_MEMORY_TEMP is not in this nvidia-ml-py version")
    values = n.call("nvmlDeviceGetFieldValues", h, [field_id])
    if isinstance(values, Unknown):
        return values
    try:
        v = values[0]
        if getattr(v, "nvmlReturn", 0) != 0:
            return Unknown("memory temperature is not reported by this GPU")
        return int(v.value.uiVal if hasattr(v.value, "uiVal") else v.value)
    except Exception as exc:
        return Unknown(f"memory temperature unreadable: {exc}")


def _processes(n: Nvml, h: Any) -> Any:
    """Compute and graphics processes on the GPU (pynvml names the call ...RunningProcesses)."""
    procs = n.call("nvmlDeviceGetComputeRunningProcesses", h, alt="nvmlDeviceGetComputeProcesses")
    if isinstance(procs, Unknown):
        return procs
    graphics = n.call("nvmlDeviceGetGraphicsRunningProcesses", h)
    seen: set[int] = set()
    out = []
    tagged = [(p, "compute") for p in procs] + [(p, "graphics") for p in ([] if isinstance(graphics, Unknown) else graphics)]
    for p, kind in tagged:
        if int(p.pid) in seen:  # a process with both a compute and a graphics context
            continue
        seen.add(int(p.pid))
        used = getattr(p, "usedGpuMemory", None)
        out.append(
            GpuProcess(
                pid=int(p.pid),
                name=_process_name(int(p.pid)),
                used_mib=round(used / MIB, 1) if isinstance(used, int) else Unknown("not reported (no permission or MIG)"),
                kind=kind,
            )
        )
    return tuple(out)


def _process_name(pid: int) -> Any:
    try:
        import psutil

        return psutil.Process(pid).name()
    except Exception as exc:
        return Unknown(f"pid {pid} not visible here ({type(exc).__name__})")


def _memory_health(n: Nvml, h: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    mode = n.call("nvmlDeviceGetEccMode", h)
    out["ecc_mode"] = _map(mode, lambda m: "enabled" if m[0] else "disabled")
    if not isinstance(mode, Unknown) and mode[0]:
        err_unc = n.const("NVML_MEMORY_ERROR_TYPE_UNCORRECTED", 1)
        err_cor = n.const("NVML_MEMORY_ERROR_TYPE_CORRECTED", 0)
        vol = n.const("NVML_VOLATILE_ECC", 0)
        out["ecc_uncorrected_volatile"] = n.call("nvmlDeviceGetTotalEccErrors", h, err_unc, vol)
        out["ecc_corrected_volatile"] = n.call("nvmlDeviceGetTotalEccErrors", h, err_cor, vol)
    pending = n.call("nvmlDeviceGetRetiredPagesPendingStatus", h)
    out["retired_pages_pending"] = _map(pending, bool)
    total = 0
    for cause in ("NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS", "NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR"):
        pages = n.call("nvmlDeviceGetRetiredPages", h, n.const(cause, 0 if "SINGLE" in cause else 1))
        if isinstance(pages, Unknown):
            total = pages
            break
        total += len(pages)
    out["retired_pages_count"] = total
    rows = n.call("nvmlDeviceGetRemappedRows", h)
    if not isinstance(rows, Unknown):
        corr, unc, pend, fail = rows
        out.update(remapped_rows_correctable=corr, remapped_rows_uncorrectable=unc,
                   remapped_rows_pending=bool(pend), remapped_rows_failure=bool(fail))
    else:
        out.update(remapped_rows_correctable=rows, remapped_rows_uncorrectable=rows,
                   remapped_rows_pending=rows, remapped_rows_failure=rows)
    return out


def _cuda_version(n: Nvml) -> Any:
    v = n.call("nvmlSystemGetCudaDriverVersion_v2", alt="nvmlSystemGetCudaDriverVersion")
    return _map(v, lambda x: f"{x // 1000}.{(x % 1000) // 10}")


def load_pynvml() -> Any:
    """Import pynvml; a missing module is reported, not raised."""
    try:
        import pynvml

        return pynvml
    except Exception as exc:
        return Unknown(f"the nvidia-ml-py package is not importable: {exc}; fix: pip install nvidia-ml-py")


def gather_nvml(module: Any = None) -> NvmlFacts:
    """Never raises. `module` defaults to the real pynvml. Every number is range-checked as it enters:
    NVML's "not available" sentinels, NaN or a negative size become Unknown with the reason."""
    return scrub(_gather(module), "by NVML: ")


def _gather(module: Any) -> NvmlFacts:
    module = load_pynvml() if module is None else module
    if isinstance(module, Unknown):
        return NvmlFacts(available=False, reason=module.reason)
    n = Nvml(module)
    try:
        module.nvmlInit()
    except Exception as exc:
        return NvmlFacts(available=False, reason=_init_failure(exc))
    try:
        count = n.call("nvmlDeviceGetCount")
        gpus = tuple(_gpu(n, i) for i in range(count)) if isinstance(count, int) else ()
        handles = [n.call("nvmlDeviceGetHandleByIndex", g.index) for g in gpus]
        links = _links(n, handles, gpus) if not any(isinstance(h, Unknown) for h in handles) else ()
        reason = "" if gpus else ("NVML reports no GPU" if isinstance(count, int) else count.reason)
        return NvmlFacts(
            available=bool(gpus),
            reason=reason,
            library_version=_map(n.call("nvmlSystemGetNVMLVersion"), _text),
            driver_version=_map(n.call("nvmlSystemGetDriverVersion"), _text),
            cuda_driver_version=_cuda_version(n),
            gpus=gpus,
            links=links,
        )
    except Exception as exc:  # a bug in this wrapper must still not crash the doctor
        return NvmlFacts(available=False, reason=f"NVML query failed: {type(exc).__name__}: {exc}")
    finally:
        try:
            module.nvmlShutdown()
        except Exception:
            pass


def _init_failure(exc: Exception) -> str:
    text = _text(exc) or type(exc).__name__
    low = text.lower()
    if "library not found" in low or "libnvidia-ml" in low or "not found" in low and "lib" in low:
        return f"the NVIDIA driver library libnvidia-ml.so is not installed or not on the loader path ({text})"
    if "mismatch" in low:
        return f"driver/library version mismatch: the kernel module and libnvidia-ml.so differ, usually after a driver update without a reboot ({text})"
    if "driver not loaded" in low:
        return f"the NVIDIA kernel driver is not loaded ({text})"
    return f"NVML could not start: {text}"
