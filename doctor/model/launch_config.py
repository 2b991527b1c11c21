"""What a launch config (a server's YAML, a shell script, a Python launcher) says about weight placement."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ConfigHint:
    line: int
    setting: str  # device_map | max_memory | offload_folder | cpu_offload_gb | n_gpu_layers | ...
    text: str  # the line as written (trimmed)
    offload: str  # "certain": weights are placed in host memory; "possible": they will be if VRAM runs short
    meaning: str  # one line for the report
    offload_gib: float | None = None  # host memory the setting names for weights
    gpu_gib: float | None = None  # GPU memory the setting allows (max_memory / --gpu-memory)


@dataclass(frozen=True)
class LaunchConfigFacts:
    path: str
    hints: tuple[ConfigHint, ...] = ()
    error: str = ""  # why the file could not be read
