"""What the llama.cpp probe measured (doctor/probe/llamacpp.py): decode runs, llama.cpp's own counters, its buffers.

Plain dataclasses so they serialize; the gap to the ceiling is attributed in doctor/verdict/llamacpp.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class LlamaCppRun:
    """One timed decode window of `tokens` tokens."""

    tokens: int
    tok_s_wall: float  # the probe's own clock around each llama_decode + logits read
    tok_s_perf: float | None = None  # llama.cpp's llama_perf_context over the same window (None: llama-bench path)


@dataclass(frozen=True)
class LlamaCppProbe:
    backend: str  # "llama-cpp-python" | "llama-bench"
    outcome: str  # ok | died-silently | error | timeout | not-installed
    model_path: str
    n_ctx: int = 0
    flash_attn: str = ""
    cache_type_k: str = "f16"
    cache_type_v: str = "f16"
    n_gpu_layers: int = -1
    warmup_tokens: int = 0
    runs: tuple[LlamaCppRun, ...] = ()
    dropped_runs: int = 0  # runs before the decode speed settled (more than settle_pct off the later median)
    median_tok_s: float | None = None
    spread_pct: float | None = None  # (max - min) / median of the kept runs
    wall_vs_perf_pct: float | None = None  # the probe's clock against llama.cpp's counters, median of runs
    buffers_mib: dict[str, dict[str, float]] = field(default_factory=dict)  # "model"/"kv"/"compute" -> device -> MiB
    offloaded: str = ""  # "offloaded 65/65 layers to GPU" as llama.cpp logged it
    gpu_sm_clock_mhz: float | None = None  # median while decoding (NVML)
    gpu_util_pct: float | None = None
    gpu_memory_used_mib: float | None = None  # max while loaded
    gpu_samples: int = 0
    returncode: int | None = None
    error: str = ""  # one line: why it stopped
    log_tail: str = ""  # the engine's last log lines (a silent death's only evidence)
    seconds: float = 0.0
