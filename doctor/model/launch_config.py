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
    tabby: TabbySettings | None = None  # the file is a TabbyAPI config.yml: what it loads (doctor/facts/engines/tabby_config.py)


@dataclass(frozen=True)
class TabbySettings:
    """What a TabbyAPI config.yml says the server loads (doctor/facts/engines/tabby_config.py), already in the doctor's
    terms: the plan takes model, context, cache and split from here; the rest is reported beside it."""

    path: str
    model_path: str | None = None  # model_dir / model_name, model_dir relative to the config's folder
    max_seq_len: int | None = None  # None: unset or -1 (TabbyAPI then reads the model's config.json)
    cache_mode: str | None = None  # a key of doctor/knowledge/kv_cache.py (FP16/Q8/Q6/Q4, "k,v" bit pairs mapped)
    cache_size: int | None = None  # tokens the cache holds (default max_seq_len)
    gpu_split: tuple[float, ...] | None = None  # GB per GPU when the split is manual (gpu_split_auto false, or TP)
    gpu_split_auto: bool = True
    autosplit_reserve_mb: tuple[float, ...] = ()  # MB per GPU autosplit leaves free
    tensor_parallel: bool = False
    chunk_size: int | None = None  # prompt tokens per prefill chunk
    draft_model_path: str | None = None  # a speculative-decoding draft model, loaded beside the main one
    draft_cache_mode: str | None = None
    draft_gpu_split: tuple[float, ...] | None = None
    notes: tuple[str, ...] = ()  # how each setting was read, one line each
    unknown_keys: tuple[str, ...] = ()  # keys this doctor does not know (a newer TabbyAPI, or a typo): reported
