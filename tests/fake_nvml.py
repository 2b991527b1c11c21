"""Fake pynvml modules for tests: a working V100 (old and new bindings), one loaded for sampling, a missing
library, a mismatch, one that raises everywhere and one whose GPU is lost mid-run.

The errors carry pynvml's nvmlReturn_t code in `.value` where the real binding would (NVMLError(value)).
"""

from __future__ import annotations

import types
from types import SimpleNamespace

NOT_SUPPORTED, FUNCTION_NOT_FOUND, GPU_IS_LOST, TIMEOUT = 3, 13, 15, 10


class NVMLError(Exception):
    def __init__(self, text: str, value: int | None = None):
        super().__init__(text)
        if value is not None:
            self.value = value


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
        nvmlDeviceGetComputeRunningProcesses=lambda h: [SimpleNamespace(pid=999999999, usedGpuMemory=6 * 1024**3)],
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


def new_binding_on_old_driver() -> types.ModuleType:
    """nvidia-ml-py 12+ on an R470 driver: the binding has the new names, the driver lacks their symbols
    (pynvml raises FunctionNotFound, or NVMLLibraryMismatchError for an unversioned call), the old ones work."""
    m = v100()

    def not_in_driver(*_a):
        raise NVMLError("Function Not Found", FUNCTION_NOT_FOUND)

    def mismatch(*_a):
        raise NVMLError("Unversioned function called and the pyNVML version does not match the NVML lib version.")

    m.nvmlDeviceGetCurrentClocksEventReasons = not_in_driver
    m.nvmlDeviceGetComputeRunningProcesses = mismatch
    m.nvmlDeviceGetComputeRunningProcesses_v2 = lambda h: [SimpleNamespace(pid=4242, usedGpuMemory=2 * 1024**3)]
    m.nvmlSystemGetCudaDriverVersion_v2 = not_in_driver
    m.nvmlSystemGetCudaDriverVersion = lambda: 11040
    return m


def sampled_v100(calls: dict | None = None, byte_counters: bool = False) -> types.ModuleType:
    """v100() plus what the sampler reads: PCIe throughput, running processes, the window counters, the field
    values (32-bit PCIe byte counters where `byte_counters`, no memory temperature). `calls` counts the calls of
    the graphics-process list, which this driver refuses."""
    calls = calls if calls is not None else {}
    m = v100()
    m.NVML_PCIE_UTIL_TX_BYTES, m.NVML_PCIE_UTIL_RX_BYTES = 0, 1
    state = {"viol": 0, "energy": 1_000_000, "rx": 2**32 - 1000, "rx_step": 50_000, "thr_rx_kbs": 2_000_000}

    def throughput(h, counter):
        return state["thr_rx_kbs"] if counter == 1 else 40_000  # KB/s: RX ~2 GB/s, TX ~41 MB/s

    def violation(h, policy):
        state["viol"] += 250_000_000  # every read: +0.25 s of throttling on each policy
        return SimpleNamespace(referenceTime=0, violationTime=state["viol"])

    def energy(h):
        state["energy"] += 50_000
        return state["energy"]

    def fields(h, ids):
        if len(ids) == 2:  # PCIe byte counters, 32-bit like the H200's, where the "driver" has them
            state["rx"] += state["rx_step"]
            ret = 0 if byte_counters else NOT_SUPPORTED
            return [SimpleNamespace(nvmlReturn=ret, value=SimpleNamespace(ullVal=state["rx"] % 2**32)),
                    SimpleNamespace(nvmlReturn=ret, value=SimpleNamespace(ullVal=7 * 10**6))]
        return [SimpleNamespace(nvmlReturn=NOT_SUPPORTED, value=SimpleNamespace(uiVal=0))]  # no memory temperature

    def graphics_never(h):
        calls["graphics"] = calls.get("graphics", 0) + 1
        raise NVMLError("Not Supported", NOT_SUPPORTED)

    m.state = state
    m.NVML_FI_DEV_MEMORY_TEMP = 82
    m.nvmlDeviceGetPcieThroughput = throughput
    m.nvmlDeviceGetViolationStatus = violation
    m.nvmlDeviceGetTotalEnergyConsumption = energy
    m.nvmlDeviceGetFieldValues = fields
    m.nvmlDeviceGetComputeRunningProcesses = lambda h: [SimpleNamespace(pid=4242, usedGpuMemory=12 * 1024**3),
                                                        SimpleNamespace(pid=777, usedGpuMemory=None)]
    m.nvmlDeviceGetGraphicsRunningProcesses = graphics_never
    return m


def counting(m: types.ModuleType) -> dict:
    """Wrap every nvml* call of `m` to count it; returns name -> calls so far."""
    counts: dict = {}
    for name in [n for n in dir(m) if n.startswith("nvml") and callable(getattr(m, n))]:
        fn = getattr(m, name)

        def counted(*a, _fn=fn, _name=name):
            counts[_name] = counts.get(_name, 0) + 1
            return _fn(*a)

        setattr(m, name, counted)
    return counts


def lose_gpu(m: types.ModuleType) -> list:
    """From now on every device call raises NVML_ERROR_GPU_IS_LOST, as after an Xid 79 (fallen off the bus).
    Returns the list of calls made after the loss."""
    after: list = []

    def lost(*_a):
        after.append(_a)
        raise NVMLError("GPU is lost", GPU_IS_LOST)

    for name in dir(m):
        if name.startswith("nvmlDevice"):
            setattr(m, name, lost)
    return after
