"""Which numbers a fact can hold: finite, of its type, in a range a real machine or model can have.

Numbers enter from NVML, a child's JSON, a replayed report and a model's config.json; any of them
can hold NaN, 1e400, -16160 or "banana". `scrub` turns such a value into Unknown(reason) wherever
the field allows it, so no check ever sees it (a NaN compares false with everything and would pass).
NVML's readings are checked one by one as they enter, against the same ranges (doctor/facts/nvml/device.py).
"""

from __future__ import annotations

import dataclasses
import math
import re
import typing
from functools import lru_cache
from typing import Any

from doctor.model.unknown import Unknown

BIG = 10**15  # no count, size or clock of a real machine or model reaches this

# Model shapes as transformers' configs hold them (the largest published models are far inside these)
CONFIG_RANGES: dict[str, tuple[float, float]] = {
    "num_hidden_layers": (1, 2048), "hidden_size": (1, 1 << 20), "num_attention_heads": (1, 1 << 14),
    "num_key_value_heads": (1, 1 << 14), "head_dim": (1, 1 << 16), "intermediate_size": (1, 1 << 24),
    "vocab_size": (1, 1 << 26), "max_position_embeddings": (1, 1 << 30), "sliding_window": (1, 1 << 30),
    "sliding_layers": (0, 2048), "num_experts": (1, 1 << 16), "rope_theta": (1e-6, 1e15),
    "num_experts_per_tok": (1, 1 << 16), "moe_intermediate_size": (1, 1 << 24),
    "shared_expert_intermediate_size": (0, 1 << 24), "moe_layers": (0, 2048), "kv_lora_rank": (1, 1 << 20),
    "q_lora_rank": (1, 1 << 20), "qk_rope_head_dim": (1, 1 << 16), "qk_nope_head_dim": (0, 1 << 16),
    "v_head_dim": (1, 1 << 16), "original_max_position_embeddings": (1, 1 << 30),
}
# What NVML reports for one GPU. A field NVML cannot fill comes back as NVML_VALUE_NOT_AVAILABLE, all ones:
# 2^32-1 or 2^64-1 (https://docs.nvidia.com/deploy/nvml-api/api/structnvmlProcessInfo__t.html), which is far
# outside these (the largest card has 288 GB, the fastest clocks are near 3 GHz, the hungriest boards ~2.7 kW)
NVML_RANGES: dict[str, tuple[float, float]] = {
    **{f"memory_{k}_mib": (0, 1 << 22) for k in ("total", "free", "used")}, "used_mib": (0, 1 << 22),
    **{k: (0, 20_000) for k in ("sm_clock_mhz", "sm_clock_max_mhz", "mem_clock_mhz", "mem_clock_max_mhz")},
    **{k: (0, 10_000) for k in ("power_draw_w", "power_limit_w", "power_default_limit_w")},
    "pcie_gen": (1, 8), "pcie_gen_max": (1, 8), "pcie_width": (1, 32), "pcie_width_max": (1, 32),
    "device_count": (0, 64), "mig_device_count": (0, 64),  # the largest hosts have 16 GPUs, a GPU 7 MIG slices
    "memory_bus_width_bits": (8, 16_384), "clocks_event_mask": (0, (1 << 32) - 2),
    "power_w": (0, 10_000), "pcie_rx_mbs": (0, 1e6), "pcie_tx_mbs": (0, 1e6),  # one sample (PCIe 6 x16: 128 GB/s)
}
RANGES: dict[str, tuple[float, float]] = {
    **CONFIG_RANGES,
    "max_seq_len": (1, 1 << 30), "gpu_split": (1e-6, 4096), "gpu_index": (0, 63),  # the plan
    "bits": (1, 32), "head_bits": (1, 32), "group_size": (-1, 1 << 20),  # GPTQ writes -1 for "one group"
    **NVML_RANGES,
}
SUFFIX_RANGES: tuple[tuple[str, tuple[float, float]], ...] = (
    ("_pct", (0, 100)), ("_c", (-100, 250)),  # utilisation percentages, temperatures in °C
    ("_tok_s", (0, 100_000)),  # one stream's decode or its ceiling: the fastest cards decode small models at a few thousand
)
CC = re.compile(r"^\d{1,2}\.\d{1,2}$")


def problem(name: str, value: Any) -> str | None:
    """Why `value` cannot be the fact `name`, or None when it can."""
    if name == "compute_capability" and isinstance(value, str) and not CC.match(value):
        return f"{value[:40]!r} is not a compute capability (like 7.0)"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value} is not a finite number"
    low, high = range_of(name)
    if not low <= value <= high:
        shown = f"{value:.4g}" if abs(value) < 1e300 else "a number with hundreds of digits"
        return f"{shown} is outside what a real one can be ({_n(low)} to {_n(high)})"
    return None


@lru_cache(maxsize=None)
def range_of(name: str) -> tuple[float, float]:
    """The values a number named `name` can hold (cached: the NVML sampler asks at every tick)."""
    return RANGES.get(name) or next((r for s, r in SUFFIX_RANGES if name.endswith(s)), (0, BIG))


def _n(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"


@lru_cache(maxsize=None)
def _unknown_allowed(cls: type) -> dict[str, str]:
    """field -> "number" (int/float or Unknown), "any" (another type or Unknown); absent: cannot be unknown."""
    hints = typing.get_type_hints(cls)
    out = {}
    for f in dataclasses.fields(cls):
        args = typing.get_args(hints.get(f.name))
        if Unknown in args:
            out[f.name] = "number" if set(args) - {Unknown} <= {int, float} else "any"
    return out


def _wrong_type(kind: str | None, value: Any) -> str | None:
    if kind == "number" and not isinstance(value, (int, float, Unknown)):
        return f"{str(value)[:40]!r} is not a number"
    return None


def scrub(obj: Any, where: str = "") -> Any:
    """`obj` with every implausible number (in a field that may be unknown) replaced by Unknown(reason)."""
    if isinstance(obj, (list, tuple)):
        return type(obj)(scrub(v, where) for v in obj)
    if not dataclasses.is_dataclass(obj) or isinstance(obj, type):
        return obj
    allowed = _unknown_allowed(type(obj))
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        why = (_wrong_type(allowed[f.name], value) or problem(f.name, value)) if f.name in allowed else None
        if why:
            changes[f.name] = Unknown(f"recorded {where}{f.name} {why}")
        elif dataclasses.is_dataclass(value) or isinstance(value, (list, tuple)):
            new = scrub(value, where)
            if new is not value and new != value:
                changes[f.name] = new
    return dataclasses.replace(obj, **changes) if changes else obj


def plan_problem(plan: Any) -> str | None:
    """The first implausible number in a dataclass whose fields cannot be unknown (a replayed plan)."""
    for f in dataclasses.fields(plan):
        value = getattr(plan, f.name)
        for v in value if isinstance(value, tuple) else (value,):
            why = problem(f.name, v)
            if why:
                return f"{f.name} {why}"
    return None
