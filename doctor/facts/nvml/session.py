"""NVML from nvmlInit to nvmlShutdown: the only code that calls either.

    with NvmlSession(module) as nvml:      # module: None for the real pynvml, or a fake in tests
        if nvml.opened:
            gpu = nvml.device(0)            # a Device: one method per reading
    # nvml.reason says why it did not open: no binding, no library, driver/library mismatch ...

NVML counts its own init/shutdown pairs, so a snapshot and a sampler may each hold a session at once.
Nothing but plain data leaves a session (facts, samples), so it can later run in a child process with
a deadline without its callers changing.
"""

from __future__ import annotations

from typing import Any

from doctor.facts.nvml.binding import Binding, NvmlRefused, load_pynvml, text
from doctor.facts.nvml.device import Device, checked
from doctor.model.unknown import Maybe, Unknown


class NvmlSession:
    def __init__(self, module: Any = None):
        self._module = module
        self.binding: Binding | None = None
        self.reason = ""  # why NVML could not be opened
        self.opened = False

    def open(self) -> bool:
        module = load_pynvml() if self._module is None else self._module
        if isinstance(module, Unknown):
            self.reason = module.reason
            return False
        try:
            module.nvmlInit()
        except Exception as exc:
            self.reason = init_failure(exc)
            return False
        self.binding, self.opened = Binding(module), True
        return True

    def close(self) -> None:
        """Shut NVML down once (idempotent); a failing shutdown is not the caller's problem."""
        if self.opened and self.binding is not None:
            self.opened = False
            try:
                self.binding.module.nvmlShutdown()
            except Exception:
                pass

    def __enter__(self) -> "NvmlSession":
        self.open()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- readings of the whole system ----------------------------------------------------------------
    def _system(self, name: str) -> Any:
        if self.binding is None:
            return Unknown(self.reason or "NVML is not open")
        try:
            return self.binding.call(name)
        except NvmlRefused as r:
            return Unknown(r.reason)

    def device_count(self) -> Maybe[int]:
        return checked("device_count", self._system("nvmlDeviceGetCount"))

    def device(self, index: int) -> Device:
        assert self.binding is not None, "open the session first"
        return Device(self.binding, index)

    def library_version(self) -> Maybe[str]:
        return _text(self._system("nvmlSystemGetNVMLVersion"))

    def driver_version(self) -> Maybe[str]:
        return _text(self._system("nvmlSystemGetDriverVersion"))

    def cuda_driver_version(self) -> Maybe[str]:
        """The newest CUDA the driver supports, "12.2" (NVML reports 12020)."""
        v = checked("cuda_driver_version", self._system("nvmlSystemGetCudaDriverVersion_v2"))
        return v if isinstance(v, Unknown) else f"{v // 1000}.{(v % 1000) // 10}"


def _text(value: Any) -> Any:
    return value if isinstance(value, Unknown) else text(value)


def init_failure(exc: Exception) -> str:
    """nvmlInit's failure in words a user can act on."""
    words = text(exc) or type(exc).__name__
    low = words.lower()
    if "library not found" in low or "libnvidia-ml" in low or "not found" in low and "lib" in low:
        return f"the NVIDIA driver library libnvidia-ml.so is not installed or not on the loader path ({words})"
    if "mismatch" in low:
        return (f"driver/library version mismatch: the kernel module and libnvidia-ml.so differ, usually after a "
                f"driver update without a reboot ({words})")
    if "driver not loaded" in low:
        return f"the NVIDIA kernel driver is not loaded ({words})"
    return f"NVML could not start: {words}"
