"""The Facts snapshot. Every field is a value or Unknown("because ..."); nothing here does I/O.

Units are in the field names (_mib, _mhz, _w, _c) so a reader of the JSON needs no manual.
Later gatherers (model directory, sampler, probe) add their own sections beside these.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from doctor.model.engines import EngineFacts
from doctor.model.launch_config import LaunchConfigFacts
from doctor.model.model_dir import ModelFacts
from doctor.model.samples import SampleSeries
from doctor.model.unknown import Maybe, Unknown

NOT_GATHERED = Unknown("not gathered")


@dataclass(frozen=True)
class GpuProcess:
    pid: int
    name: Maybe[str]
    used_mib: Maybe[float]
    kind: str = "compute"  # compute | graphics


@dataclass(frozen=True)
class GpuFacts:
    index: int
    name: Maybe[str] = NOT_GATHERED
    uuid: Maybe[str] = NOT_GATHERED
    serial: Maybe[str] = NOT_GATHERED
    pci_bus_id: Maybe[str] = NOT_GATHERED
    compute_capability: Maybe[str] = NOT_GATHERED  # "7.0"
    memory_total_mib: Maybe[float] = NOT_GATHERED
    memory_free_mib: Maybe[float] = NOT_GATHERED
    memory_used_mib: Maybe[float] = NOT_GATHERED
    memory_bus_width_bits: Maybe[int] = NOT_GATHERED
    sm_clock_mhz: Maybe[int] = NOT_GATHERED
    sm_clock_max_mhz: Maybe[int] = NOT_GATHERED
    mem_clock_mhz: Maybe[int] = NOT_GATHERED
    mem_clock_max_mhz: Maybe[int] = NOT_GATHERED
    clocks_event_mask: Maybe[int] = NOT_GATHERED
    clocks_event_reasons: Maybe[tuple[str, ...]] = NOT_GATHERED
    temperature_c: Maybe[int] = NOT_GATHERED
    slowdown_temperature_c: Maybe[int] = NOT_GATHERED
    shutdown_temperature_c: Maybe[int] = NOT_GATHERED
    memory_temperature_c: Maybe[int] = NOT_GATHERED
    max_operating_temperature_c: Maybe[int] = NOT_GATHERED  # "GPU Max Operating Temp": SW thermal slowdown starts
    memory_max_temperature_c: Maybe[int] = NOT_GATHERED  # "Memory Max Operating Temp" (HBM cards)
    power_draw_w: Maybe[float] = NOT_GATHERED
    power_limit_w: Maybe[float] = NOT_GATHERED
    power_default_limit_w: Maybe[float] = NOT_GATHERED
    utilization_gpu_pct: Maybe[int] = NOT_GATHERED
    utilization_memory_pct: Maybe[int] = NOT_GATHERED
    pcie_gen: Maybe[int] = NOT_GATHERED
    pcie_gen_max: Maybe[int] = NOT_GATHERED
    pcie_width: Maybe[int] = NOT_GATHERED
    pcie_width_max: Maybe[int] = NOT_GATHERED
    processes: Maybe[tuple[GpuProcess, ...]] = NOT_GATHERED
    # ECC / retired pages / remapped rows (runtime-health issue fills these)
    ecc_mode: Maybe[str] = NOT_GATHERED
    ecc_uncorrected_volatile: Maybe[int] = NOT_GATHERED
    ecc_corrected_volatile: Maybe[int] = NOT_GATHERED
    retired_pages_pending: Maybe[bool] = NOT_GATHERED
    retired_pages_count: Maybe[int] = NOT_GATHERED
    remapped_rows_pending: Maybe[bool] = NOT_GATHERED
    remapped_rows_failure: Maybe[bool] = NOT_GATHERED
    remapped_rows_correctable: Maybe[int] = NOT_GATHERED
    remapped_rows_uncorrectable: Maybe[int] = NOT_GATHERED
    # several GPUs (issue 15): MIG mode and its instances, which CUDA sees instead of the whole card
    mig_mode: Maybe[str] = NOT_GATHERED  # "enabled" | "disabled"
    mig_devices: Maybe[tuple[str, ...]] = NOT_GATHERED  # MIG-... UUIDs of its instances


@dataclass(frozen=True)
class GpuLink:
    """How two GPUs (NVML indices a < b) reach each other: NVML's common-ancestor level, NVLink lanes, P2P."""

    a: int
    b: int
    path: Maybe[str] = NOT_GATHERED  # internal | single-switch | multiple-switches | host-bridge | numa-node | system
    nvlink_lanes: Maybe[int] = NOT_GATHERED  # active NVLink lanes between the two (0: none)
    p2p: Maybe[str] = NOT_GATHERED  # "ok" or NVML's reason (chipset not supported, topology not supported ...)


@dataclass(frozen=True)
class NvmlFacts:
    """What the NVIDIA driver says, through NVML. `available` False carries the reason."""

    available: bool
    reason: str = ""  # why not available: no library, driver/library mismatch, no GPU ...
    library_version: Maybe[str] = NOT_GATHERED
    driver_version: Maybe[str] = NOT_GATHERED
    cuda_driver_version: Maybe[str] = NOT_GATHERED  # max CUDA the driver supports, "13.0"
    gpus: tuple[GpuFacts, ...] = ()
    links: tuple[GpuLink, ...] = ()  # one per pair of GPUs, when there are several

    def link(self, a: int, b: int) -> GpuLink | None:
        lo, hi = min(a, b), max(a, b)
        return next((l for l in self.links if l.a == lo and l.b == hi), None)


@dataclass(frozen=True)
class TorchFacts:
    installed: bool
    reason: str = ""  # why facts are missing: not installed, import crashed, timed out ...
    version: Maybe[str] = NOT_GATHERED
    cuda: Maybe[str] = NOT_GATHERED  # torch.version.cuda; None-equivalent "cpu" build -> "none"
    arch_list: Maybe[tuple[str, ...]] = NOT_GATHERED
    cuda_available: Maybe[bool] = NOT_GATHERED
    device_count: Maybe[int] = NOT_GATHERED
    device_capabilities: Maybe[tuple[str, ...]] = NOT_GATHERED
    warnings: tuple[str, ...] = ()
    location: Maybe[str] = NOT_GATHERED
    static_from_cache: bool = False  # version/cuda/arch_list came from the per-wheel cache


@dataclass(frozen=True)
class NvccFacts:
    path: Maybe[str] = NOT_GATHERED
    version: Maybe[str] = NOT_GATHERED  # "12.1"
    cuda_home: Maybe[str] = NOT_GATHERED
    ninja: Maybe[str] = NOT_GATHERED


@dataclass(frozen=True)
class PythonFacts:
    version: str
    executable: str
    packages: dict[str, Maybe[str]] = field(default_factory=dict)  # dist name -> version
    torch: TorchFacts = TorchFacts(installed=False, reason="not gathered")
    nvcc: NvccFacts = NvccFacts()
    env: dict[str, str] = field(default_factory=dict)  # relevant env vars only
    exllamav2_build: BuildCache | None = None  # ExLlamaV2's JIT build cache (doctor/facts/engines/build_cache.py)


@dataclass(frozen=True)
class HostFacts:
    os: Maybe[str] = NOT_GATHERED
    kernel: Maybe[str] = NOT_GATHERED
    hostname: Maybe[str] = NOT_GATHERED
    cpu_model: Maybe[str] = NOT_GATHERED
    cpu_count: Maybe[int] = NOT_GATHERED
    ram_total_mib: Maybe[float] = NOT_GATHERED
    ram_available_mib: Maybe[float] = NOT_GATHERED
    swap_total_mib: Maybe[float] = NOT_GATHERED
    swap_used_mib: Maybe[float] = NOT_GATHERED
    # NVIDIA display/3D controllers on the PCI bus, seen without the driver ("0000:3b:00.0 10de:1db4")
    nvidia_pci_devices: Maybe[tuple[str, ...]] = NOT_GATHERED
    # where the doctor runs (doctor/facts/host/runtime_env.py): WSL2 lists no per-process GPU use; a container may run a
    # newer CUDA through the forward-compatibility libcuda ("/usr/local/cuda-12.4/compat/libcuda.so.550.54.14", "" = none)
    wsl: Maybe[bool] = NOT_GATHERED
    container: Maybe[str] = NOT_GATHERED  # "docker", "podman", "" when none is seen
    cuda_compat_libcuda: Maybe[str] = NOT_GATHERED


@dataclass(frozen=True)
class Facts:
    """Everything the checks may look at, as one immutable snapshot."""

    gathered_at: str
    nvml: NvmlFacts
    python: PythonFacts
    host: HostFacts
    model: ModelFacts | None = None  # the model directory's facts, when --model was given (doctor/facts/modeldir/directory.py)
    samples: SampleSeries | None = None  # NVML/host time series, when the machine was sampled (watch, probe)
    launch_config: LaunchConfigFacts | None = None  # offload settings found in the server's launch config
    engines: EngineFacts | None = None  # llama.cpp, Ollama: installed, built for which archs (doctor/facts/engines/installed.py)

    def gpu(self, index: int = 0) -> GpuFacts | None:
        for g in self.nvml.gpus:
            if g.index == index:
                return g
        return None


STALE_LOCK_S = 600  # a build lock older than this belongs to a build that was killed


@dataclass(frozen=True)
class BuildCache:
    root: str  # the folder that holds exllamav2_ext* build folders
    build_dir: str  # the newest exllamav2_ext* folder, or where the first build will go
    built: bool  # a compiled exllamav2_ext*.so is there, newer than every source of the installed exllamav2
    lock_age_s: float | None  # a 'lock' file is there (None: no lock)
    objects: int  # compiled object files present (progress of a running build)
    prebuilt: bool = False  # a prebuilt exllamav2_ext module is installed: no JIT build at all

    @property
    def stale_lock(self) -> bool:
        return self.lock_age_s is not None and self.lock_age_s > STALE_LOCK_S
