"""The NVML part of Facts: every GPU's readings once, the driver's versions and the links between GPUs.

Missing libnvidia-ml.so, a driver/library mismatch and "no GPU" are facts, not crashes; every reading
comes through Device, so each is a value or Unknown(reason), range-checked where it entered.
"""

from __future__ import annotations

from typing import Any

from doctor.facts.nvml.binding import NvmlRefused, decode_clocks_event_mask, text
from doctor.facts.nvml.device import Device, ProcessOnGpu
from doctor.facts.nvml.session import NvmlSession
from doctor.facts.nvml.topology import links
from doctor.model.facts import GpuFacts, GpuProcess, NvmlFacts
from doctor.model.unknown import Maybe, Unknown


def gather_nvml(module: Any = None) -> NvmlFacts:
    """Never raises. `module` defaults to the real pynvml (tests pass a fake: tests/fake_nvml.py)."""
    with NvmlSession(module) as nvml:
        if not nvml.opened:
            return NvmlFacts(available=False, reason=nvml.reason)
        try:
            return _facts(nvml)
        except Exception as exc:  # a bug in this reader must still not crash the doctor
            return NvmlFacts(available=False, reason=f"NVML query failed: {type(exc).__name__}: {exc}")


def _facts(nvml: NvmlSession) -> NvmlFacts:
    count = nvml.device_count()
    devices = [nvml.device(i) for i in range(count)] if isinstance(count, int) else []
    gpus = tuple(gpu_facts(d) for d in devices)
    reason = "" if gpus else ("NVML reports no GPU" if isinstance(count, int) else count.reason)
    return NvmlFacts(
        available=bool(gpus),
        reason=reason,
        library_version=nvml.library_version(),
        driver_version=nvml.driver_version(),
        cuda_driver_version=nvml.cuda_driver_version(),
        gpus=gpus,
        links=links(devices, gpus) if all(d.handle is not None for d in devices) else (),
    )


# the GpuFacts fields read by the Device method of the same name, in the order they are asked of NVML
SAME_NAME_READINGS = (
    "name", "uuid", "serial", "pci_bus_id", "compute_capability", "memory_bus_width_bits",
    "sm_clock_mhz", "sm_clock_max_mhz", "mem_clock_mhz", "mem_clock_max_mhz",
    "temperature_c", "slowdown_temperature_c", "shutdown_temperature_c", "max_operating_temperature_c",
    "memory_max_temperature_c", "memory_temperature_c", "power_draw_w", "power_limit_w", "power_default_limit_w",
    "pcie_gen", "pcie_gen_max", "pcie_width", "pcie_width_max",
)


def gpu_facts(d: Device) -> GpuFacts:
    if d.handle is None:
        return GpuFacts(index=d.index, name=d.gone or Unknown("no handle"))
    mem, util, mask = d.memory(), d.utilization(), d.clocks_event_mask()
    return GpuFacts(
        index=d.index,
        **{field: getattr(d, field)() for field in SAME_NAME_READINGS},
        memory_total_mib=mem.total_mib,
        memory_free_mib=mem.free_mib,
        memory_used_mib=mem.used_mib,
        clocks_event_mask=mask,
        clocks_event_reasons=mask if isinstance(mask, Unknown) else decode_clocks_event_mask(mask),
        utilization_gpu_pct=util.gpu_pct,
        utilization_memory_pct=util.memory_pct,
        processes=_processes(d.processes()),
        **_memory_health(d),
        **_mig(d),
    )


def _processes(procs: tuple[ProcessOnGpu, ...] | Unknown) -> Maybe[tuple[GpuProcess, ...]]:
    if isinstance(procs, Unknown):
        return procs
    return tuple(GpuProcess(pid=p.pid, name=_process_name(p.pid), used_mib=p.used_mib, kind=p.kind) for p in procs)


def _process_name(pid: int) -> Maybe[str]:
    try:
        import psutil  # lazy: a missing or broken psutil leaves the name unknown, never raises

        return psutil.Process(pid).name()
    except Exception as exc:
        return Unknown(f"pid {pid} not visible here ({type(exc).__name__})")


def _memory_health(d: Device) -> dict[str, Any]:
    """ECC mode and volatile error counts, retired pages (Volta and older), remapped rows (Ampere and newer)."""
    c = d.binding.const
    out: dict[str, Any] = {}
    mode = d.read("ecc_mode", "nvmlDeviceGetEccMode")
    out["ecc_mode"] = mode if isinstance(mode, Unknown) else ("enabled" if mode[0] else "disabled")
    if not isinstance(mode, Unknown) and mode[0]:
        vol = c("NVML_VOLATILE_ECC")
        for key, kind in (("ecc_uncorrected_volatile", "NVML_MEMORY_ERROR_TYPE_UNCORRECTED"),
                          ("ecc_corrected_volatile", "NVML_MEMORY_ERROR_TYPE_CORRECTED")):
            out[key] = d.number(key, "nvmlDeviceGetTotalEccErrors", c(kind), vol)
    pending = d.read("retired_pages_pending", "nvmlDeviceGetRetiredPagesPendingStatus")
    out["retired_pages_pending"] = pending if isinstance(pending, Unknown) else bool(pending)
    total: Any = 0
    for cause in ("NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS",
                  "NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR"):
        pages = d.call("nvmlDeviceGetRetiredPages", c(cause))
        if isinstance(pages, Unknown):
            total = pages
            break
        total += len(pages)
    out["retired_pages_count"] = d.check("retired_pages_count", total)
    rows = d.read("remapped_rows", "nvmlDeviceGetRemappedRows")
    if isinstance(rows, Unknown):
        out.update(remapped_rows_correctable=rows, remapped_rows_uncorrectable=rows,
                   remapped_rows_pending=rows, remapped_rows_failure=rows)
    else:
        corr, unc, pend, fail = rows
        out.update(remapped_rows_correctable=d.check("remapped_rows_correctable", corr),
                   remapped_rows_uncorrectable=d.check("remapped_rows_uncorrectable", unc),
                   remapped_rows_pending=bool(pend), remapped_rows_failure=bool(fail))
    return out


def _mig(d: Device) -> dict[str, Any]:
    """MIG mode and the UUIDs of its instances (CUDA sees these slices, not the card)."""
    mode = d.read("mig_mode", "nvmlDeviceGetMigMode")
    if isinstance(mode, Unknown):
        return {"mig_mode": mode, "mig_devices": mode}
    if not mode[0]:
        return {"mig_mode": "disabled", "mig_devices": ()}
    count = d.check("mig_device_count", d.read("mig_device_count", "nvmlDeviceGetMaxMigDeviceCount"))  # bounded first
    if isinstance(count, Unknown):
        return {"mig_mode": "enabled", "mig_devices": count}
    uuids = []
    for i in range(count):
        mig = d.call("nvmlDeviceGetMigDeviceHandleByIndex", i)
        if isinstance(mig, Unknown):
            continue
        try:
            uuids.append(text(d.binding.call("nvmlDeviceGetUUID", mig)))
        except NvmlRefused:
            continue
    return {"mig_mode": "enabled", "mig_devices": tuple(uuids)}
