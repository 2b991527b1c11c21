"""The recorded time series: what the sampler saw, per GPU and per watched process.

Plain frozen dataclasses so a series round-trips through doctor/model/serialize.py inside Facts.samples.
A reading that failed in one tick is None in that sample; a reading the driver never offers is
None in every sample and its reason sits once in `GpuSeries.unavailable` (no reason per sample,
which would bloat a report by hundreds of identical strings).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class GpuProcessUse:
    """One process holding memory on a GPU at one instant (NVML's compute/graphics process list)."""

    pid: int
    used_mib: float | None  # None: the driver does not say (no permission, MIG, Windows WDDM)


@dataclass(frozen=True)
class GpuSample:
    t_s: float  # seconds since the sampler started
    sm_clock_mhz: int | None = None
    mem_clock_mhz: int | None = None
    reasons: tuple[str, ...] | None = None  # clocks-event reasons as named flags, e.g. ("gpu_idle",)
    temperature_c: int | None = None
    memory_temperature_c: int | None = None
    power_w: float | None = None
    util_gpu_pct: int | None = None
    util_mem_pct: int | None = None
    pcie_rx_mbs: float | None = None  # host -> GPU, MB/s (1e6 B); how it was measured: GpuSeries.pcie_source
    pcie_tx_mbs: float | None = None  # GPU -> host
    pcie_gen: int | None = None
    pcie_width: int | None = None
    memory_used_mib: float | None = None
    processes: tuple[GpuProcessUse, ...] | None = None


@dataclass(frozen=True)
class WindowCounters:
    """Cumulative driver counters read at the start and end of the window; deltas, not guesses."""

    window_s: float  # time between the two reads
    throttle_s: dict[str, float] = field(default_factory=dict)  # policy -> seconds the clocks were held back
    energy_j: float | None = None  # nvmlDeviceGetTotalEnergyConsumption delta
    pcie_rx_bytes: int | None = None  # host -> GPU bytes from the PCIe byte counters, summed tick by tick
    pcie_tx_bytes: int | None = None
    pcie_counted_s: float | None = None  # the time those bytes were counted over (first to last tick)
    unavailable: dict[str, str] = field(default_factory=dict)  # counter -> why it could not be read


@dataclass(frozen=True)
class GpuSeries:
    index: int
    name: str | None = None
    # what the samples are measured against, read once at the start
    sm_clock_max_mhz: int | None = None
    mem_clock_max_mhz: int | None = None
    power_limit_w: float | None = None  # enforced
    power_default_limit_w: float | None = None
    slowdown_temperature_c: int | None = None
    max_operating_temperature_c: int | None = None
    memory_max_temperature_c: int | None = None
    pcie_gen_max: int | None = None
    pcie_width_max: int | None = None
    memory_total_mib: float | None = None
    pcie_source: str = ""  # "byte counters (unwrapped ...)" | "throughput (NVML ~20 ms window)": see pcie_meter.py
    samples: tuple[GpuSample, ...] = ()
    counters: WindowCounters | None = None
    process_names: dict[str, str] = field(default_factory=dict)  # pid (as text) -> name, for pids psutil could see
    unavailable: dict[str, str] = field(default_factory=dict)  # reading -> why the driver did not give it


@dataclass(frozen=True)
class ProcessSample:
    t_s: float
    rss_mib: float | None = None
    shared_mib: float | None = None  # file-backed part of RSS (mmapped safetensors); anonymous = rss - shared
    cpu_pct: float | None = None  # of one core, since the previous sample


@dataclass(frozen=True)
class ProcessSeries:
    """A watched host process. Only read, never signalled: name, user, memory and CPU time."""

    pid: int
    name: str | None = None
    user: str | None = None
    samples: tuple[ProcessSample, ...] = ()
    exited_at_s: float | None = None  # it disappeared during the window
    unavailable: str = ""  # why nothing could be read (another user's process, no psutil)
    child_of: int | None = None  # a worker of this watched pid, read along with it


@dataclass(frozen=True)
class HostSample:
    t_s: float
    swap_in_mbs: float | None = None
    swap_out_mbs: float | None = None
    ram_available_mib: float | None = None


@dataclass(frozen=True)
class ServerSample:
    """One reading of an engine server's own counters (watch --engine-url): None where it does not expose one."""

    t_s: float  # seconds since the window started
    in_flight: float | None = None  # requests being decoded (llama-server requests_processing, vLLM num_requests_running)
    queued: float | None = None  # requests waiting for a slot (llama-server requests_deferred, vLLM num_requests_waiting)
    tokens_total: float | None = None  # generated tokens since the server started (a counter; llama-server adds a
    #                                    request's tokens when it ends, vLLM at each step)
    decode_s_total: float | None = None  # llama-server: slot-seconds spent generating them (a counter)
    slots_busy: int | None = None  # llama-server /slots: is_processing
    slots: int | None = None
    kv_usage: float | None = None  # share of the KV cache in use
    error: str = ""  # what could not be read at this tick
    tokens_in_progress: float | None = None  # llama-server /slots: tokens the busy slots' requests generated so far
    #                                          (not yet in tokens_total; absent in reports before issue 38's fix)


@dataclass(frozen=True)
class ServerSeries:
    """An engine server's counters over the window, read beside NVML (doctor/facts/engines/servers.py)."""

    url: str
    kind: str  # llama-server | vllm | ollama | openai-compatible
    samples: tuple[ServerSample, ...] = ()
    models: tuple[dict, ...] = ()  # Ollama /api/ps: name, size, size_vram, vram_share
    error: str = ""  # why nothing could be read


@dataclass(frozen=True)
class SampleSeries:
    started_at: str  # ISO time, UTC
    duration_s: float
    hz: float  # the rate actually used (requests are clamped to the sampler's bounds)
    gpus: tuple[GpuSeries, ...] = ()
    processes: tuple[ProcessSeries, ...] = ()
    host: tuple[HostSample, ...] = ()
    watched_pids: tuple[int, ...] = ()  # "yours": these and their children are not competitors
    sampler_cpu_s: float | None = None  # CPU time the sampler used: its thread, and its NVML child's requests
    nvml_reason: str = ""  # why no GPU was sampled at all
    nvml_stopped: str = ""  # why the GPU readings ended before the window did (NVML hung or crashed at a tick)
    note: str = ""  # provenance of a recorded or generated series
    server: ServerSeries | None = None  # watch --engine-url: the server's own counters, beside NVML

    def gpu(self, index: int) -> GpuSeries | None:
        return next((g for g in self.gpus if g.index == index), None)
