"""Fake pynvml modules for tests: a working V100, a missing library, a mismatch, and one that raises everywhere."""

from __future__ import annotations

import types
from types import SimpleNamespace


class NVMLError(Exception):
    pass


def _base(**overrides) -> types.ModuleType:
    m = types.ModuleType("fake_pynvml")
    m.NVML_CLOCK_SM, m.NVML_CLOCK_MEM = 1, 2
    m.NVML_TEMPERATURE_GPU = 0
    m.NVML_TEMPERATURE_THRESHOLD_SHUTDOWN, m.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN = 0, 1
    m.nvmlInit = lambda: None
    m.nvmlShutdown = lambda: None
    for k, v in overrides.items():
        setattr(m, k, v)
    return m


def v100() -> types.ModuleType:
    """A Tesla V100-PCIE-16GB as an older driver reports it (old 'Throttle' name, no field values)."""
    not_supported = NVMLError("Not Supported")

    def raise_ns(*_a):
        raise not_supported

    return _base(
        nvmlDeviceGetCount=lambda: 1,
        nvmlDeviceGetHandleByIndex=lambda i: f"h{i}",
        nvmlDeviceGetName=lambda h: b"Tesla V100-PCIE-16GB",
        nvmlDeviceGetUUID=lambda h: "GPU-1234",
        nvmlDeviceGetSerial=lambda h: "0323917000000",
        nvmlDeviceGetPciInfo=lambda h: SimpleNamespace(busId=b"00000000:3B:00.0"),
        nvmlDeviceGetCudaComputeCapability=lambda h: (7, 0),
        nvmlDeviceGetMemoryInfo=lambda h: SimpleNamespace(total=16945512448, free=16609902592, used=335609856),
        nvmlDeviceGetMemoryBusWidth=lambda h: 4096,
        nvmlDeviceGetClockInfo=lambda h, t: {1: 1380, 2: 877}[t],
        nvmlDeviceGetMaxClockInfo=lambda h, t: {1: 1380, 2: 877}[t],
        nvmlDeviceGetCurrentClocksThrottleReasons=lambda h: 0x40 | 0x20,
        nvmlDeviceGetTemperature=lambda h, t: 86,
        nvmlDeviceGetTemperatureThreshold=lambda h, t: {0: 90, 1: 87}[t],
        nvmlDeviceGetPowerUsage=lambda h: 231500,
        nvmlDeviceGetEnforcedPowerLimit=lambda h: 250000,
        nvmlDeviceGetPowerManagementDefaultLimit=lambda h: 250000,
        nvmlDeviceGetUtilizationRates=lambda h: SimpleNamespace(gpu=97, memory=88),
        nvmlDeviceGetCurrPcieLinkGeneration=lambda h: 3,
        nvmlDeviceGetMaxPcieLinkGeneration=lambda h: 3,
        nvmlDeviceGetCurrPcieLinkWidth=lambda h: 16,
        nvmlDeviceGetMaxPcieLinkWidth=lambda h: 16,
        nvmlDeviceGetComputeProcesses=lambda h: [SimpleNamespace(pid=999999999, usedGpuMemory=6 * 1024**3)],
        nvmlDeviceGetEccMode=lambda h: (1, 1),
        nvmlDeviceGetTotalEccErrors=lambda h, e, c: 0,
        nvmlDeviceGetRetiredPagesPendingStatus=lambda h: 0,
        nvmlDeviceGetRetiredPages=lambda h, cause: [],
        nvmlDeviceGetRemappedRows=raise_ns,
        nvmlSystemGetNVMLVersion=lambda: "12.535.183.01",
        nvmlSystemGetDriverVersion=lambda: b"535.183.01",
        nvmlSystemGetCudaDriverVersion_v2=lambda: 12020,
    )


def library_missing() -> types.ModuleType:
    def init():
        raise NVMLError("NVML Shared Library Not Found")

    return _base(nvmlInit=init)


def driver_mismatch() -> types.ModuleType:
    def init():
        raise NVMLError("Driver/library version mismatch")

    return _base(nvmlInit=init)


def raising_everywhere() -> types.ModuleType:
    """Init works, then every query raises: GPU fallen off the bus, or a broken driver."""
    m = _base()
    def boom(*_a):
        raise NVMLError("GPU is lost")
    for name in dir(v100()):
        if name.startswith("nvml") and name not in ("nvmlInit", "nvmlShutdown"):
            setattr(m, name, boom)
    return m


def two_v100s_on_nvlink() -> types.ModuleType:
    """Two V100s joined by two NVLink lanes under one PCIe switch (MIG is not supported on Volta)."""
    m = v100()
    buses = {"h0": b"00000000:06:00.0", "h1": b"00000000:07:00.0"}
    peer = {"h0": buses["h1"], "h1": buses["h0"]}

    def nvlink_state(h, link):
        if link >= 6:
            raise NVMLError("Invalid Argument")
        return 1 if link < 2 else 0

    m.nvmlDeviceGetCount = lambda: 2
    m.nvmlDeviceGetPciInfo = lambda h: SimpleNamespace(busId=buses[h])
    m.nvmlDeviceGetUUID = lambda h: f"GPU-{h}"
    m.nvmlDeviceGetNvLinkState = nvlink_state
    m.nvmlDeviceGetNvLinkRemotePciInfo_v2 = lambda h, link: SimpleNamespace(busId=peer[h])
    m.nvmlDeviceGetTopologyCommonAncestor = lambda a, b: 10
    m.nvmlDeviceGetP2PStatus = lambda a, b, caps: 0
    m.nvmlDeviceGetMigMode = lambda h: (_ for _ in ()).throw(NVMLError("Not Supported"))
    return m
