"""The pynvml module as the doctor calls it: one table of versioned names, constants and error kinds.

Bindings and drivers of different ages disagree on names: nvidia-ml-py renamed ClocksThrottleReasons to
ClocksEventReasons, and a new binding on an old driver (nvidia-ml-py 12 on R470) raises FunctionNotFound
for ..._v3 symbols the driver does not have. Every call goes through `Binding.call`, which tries the
names in FUNCTIONS in order, pins the first that works, and raises `NvmlRefused` with the kind of failure.
Constants come from the binding where it has them, else nvml.h's values (CONSTANTS), which are the same.
"""

from __future__ import annotations

from typing import Any

from doctor.model.unknown import Unknown

# An NVML function, then the older names to try where the binding lacks it or the driver lacks its symbol.
FUNCTIONS: dict[str, tuple[str, ...]] = {
    "nvmlDeviceGetCurrentClocksEventReasons": ("nvmlDeviceGetCurrentClocksThrottleReasons",),
    "nvmlDeviceGetComputeRunningProcesses": ("nvmlDeviceGetComputeRunningProcesses_v2",),
    "nvmlDeviceGetGraphicsRunningProcesses": ("nvmlDeviceGetGraphicsRunningProcesses_v2",),
    "nvmlSystemGetCudaDriverVersion_v2": ("nvmlSystemGetCudaDriverVersion",),
    "nvmlDeviceGetNvLinkRemotePciInfo_v2": ("nvmlDeviceGetNvLinkRemotePciInfo",),
}

# nvml.h's values, used where the binding has no constant of that name
CONSTANTS: dict[str, int] = {
    "NVML_CLOCK_SM": 1, "NVML_CLOCK_MEM": 2, "NVML_TEMPERATURE_GPU": 0,
    "NVML_TEMPERATURE_THRESHOLD_SHUTDOWN": 0, "NVML_TEMPERATURE_THRESHOLD_SLOWDOWN": 1,
    "NVML_TEMPERATURE_THRESHOLD_MEM_MAX": 2, "NVML_TEMPERATURE_THRESHOLD_GPU_MAX": 3,
    "NVML_PCIE_UTIL_TX_BYTES": 0, "NVML_PCIE_UTIL_RX_BYTES": 1,
    "NVML_MEMORY_ERROR_TYPE_CORRECTED": 0, "NVML_MEMORY_ERROR_TYPE_UNCORRECTED": 1, "NVML_VOLATILE_ECC": 0,
    "NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS": 0,
    "NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR": 1,
    "NVML_P2P_CAPS_INDEX_READ": 0,
    "NVML_FI_DEV_MEMORY_TEMP": 82, "NVML_FI_DEV_PCIE_COUNT_TX_BYTES": 197, "NVML_FI_DEV_PCIE_COUNT_RX_BYTES": 198,
    # nvmlPerfPolicyType_t, stable across binding versions
    "NVML_PERF_POLICY_POWER": 0, "NVML_PERF_POLICY_THERMAL": 1, "NVML_PERF_POLICY_SYNC_BOOST": 2,
    "NVML_PERF_POLICY_BOARD_LIMIT": 3, "NVML_PERF_POLICY_LOW_UTILIZATION": 4, "NVML_PERF_POLICY_RELIABILITY": 5,
}

# Clocks-event (throttle) reason bits of nvml.h (nvmlClocksEventReason*, formerly nvmlClocksThrottleReason*): the
# library's ABI, so every binding has these values under one name or the other
CLOCKS_EVENT_BITS: dict[int, str] = {
    0x1: "gpu_idle", 0x2: "applications_clocks_setting", 0x4: "sw_power_cap", 0x8: "hw_slowdown", 0x10: "sync_boost",
    0x20: "sw_thermal_slowdown", 0x40: "hw_thermal_slowdown", 0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}


def decode_clocks_event_mask(mask: int) -> tuple[str, ...]:
    return tuple(name for bit, name in CLOCKS_EVENT_BITS.items() if mask & bit)

# nvmlReturn_t codes (nvml.h) that decide what a failed call means
FUNCTION_NOT_FOUND, GPU_IS_LOST, GPU_NOT_FOUND = 13, 15, 28
TRANSIENT_CODES = frozenset({10, 19, 27})  # TIMEOUT, IN_USE, NOT_READY
MISSING, LOST, TRANSIENT, REFUSED = "missing", "lost", "transient", "refused"


class NvmlRefused(Exception):
    """A call NVML did not answer: `kind` is MISSING (no such function here), LOST (the GPU fell off the bus),
    TRANSIENT (busy or timed out: ask again later) or REFUSED (not supported, no permission ...)."""

    def __init__(self, reason: str, kind: str):
        super().__init__(reason)
        self.reason, self.kind = reason, kind


def text(value: Any) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def error_kind(exc: BaseException) -> str:
    """What a pynvml exception means, by its nvmlReturn_t code where it has one, else by its words."""
    code = getattr(exc, "value", None)
    words = (text(exc) or type(exc).__name__).lower()
    if code == FUNCTION_NOT_FOUND or "function not found" in words or "version does not match" in words:
        return MISSING  # nvmlLib lacks the symbol, or pynvml's NVMLLibraryMismatchError
    if code in (GPU_IS_LOST, GPU_NOT_FOUND) or "gpu is lost" in words:
        return LOST
    if code in TRANSIENT_CODES or "timeout" in words or "busy" in words or "in use" in words:
        return TRANSIENT
    return REFUSED


class Binding:
    """Calls into one pynvml module; the only place that names its functions and constants."""

    def __init__(self, module: Any):
        self.module = module
        self._pinned: dict[str, str] = {}  # function -> the name that answered (itself or an older one)
        self._consts: dict[str, int] = {}

    def call(self, name: str, *args: Any) -> Any:
        """NVML's answer, or NvmlRefused; the first name that works is pinned for the next calls."""
        pinned = self._pinned.get(name)
        if pinned is not None:
            try:
                return getattr(self.module, pinned)(*args)
            except Exception as exc:
                raise NvmlRefused(f"{name}: {text(exc) or type(exc).__name__}", error_kind(exc)) from None
        return self._first_answer(name, args)

    def _first_answer(self, name: str, args: tuple[Any, ...]) -> Any:
        missing = f"{name} is not in this nvidia-ml-py version"
        for candidate in (name, *FUNCTIONS.get(name, ())):
            fn = getattr(self.module, candidate, None)
            if not callable(fn):
                continue
            try:
                value = fn(*args)
            except Exception as exc:
                kind = error_kind(exc)
                if kind == MISSING:  # the driver lacks this symbol: an older name may be there
                    missing = f"{name}: {text(exc) or type(exc).__name__} (driver older than the binding)"
                    continue
                self._pinned[name] = candidate
                raise NvmlRefused(f"{name}: {text(exc) or type(exc).__name__}", kind) from None
            self._pinned[name] = candidate
            return value
        raise NvmlRefused(missing, MISSING)

    def const(self, name: str) -> int:
        value = self._consts.get(name)
        if value is None:
            own = getattr(self.module, name, None)
            value = self._consts[name] = own if isinstance(own, int) else CONSTANTS[name]
        return value


def load_pynvml() -> Any:
    """Import pynvml; a missing module is reported, not raised."""
    try:
        import pynvml  # lazy: a missing or broken nvidia-ml-py is reported as Unknown, never raised

        return pynvml
    except Exception as exc:
        return Unknown(f"the nvidia-ml-py package is not importable: {exc}; fix: pip install nvidia-ml-py")
