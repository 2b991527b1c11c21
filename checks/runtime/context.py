"""What the runtime checks share: the target GPU's sampled series, the model's GPU bytes, units.

The model's size comes from the model group's arithmetic (doctor.knowledge.arithmetic.model_bytes) over Facts.model;
this module only asks it, it does not size models itself.
"""

from __future__ import annotations

from checks.base import CheckContext
from doctor.knowledge.arithmetic import model_bytes as arithmetic
from doctor.knowledge.gpus import spec_for_name
from doctor.model.facts import GpuFacts
from doctor.model.sample_summary import GpuSummary, summarize_gpu
from doctor.model.samples import GpuSeries
from doctor.model.unknown import T, Unknown, known


def target_series(ctx: CheckContext) -> GpuSeries | None:
    """The sampled series of the plan's GPU, when this run sampled (watch, probe) and got samples."""
    series = ctx.facts.samples
    if series is None:
        return None
    g = series.gpu(ctx.plan.gpu_index)
    return g if g is not None and g.samples else None


def target_summary(ctx: CheckContext) -> tuple[GpuSeries, GpuSummary] | None:
    g = target_series(ctx)
    return (g, summarize_gpu(g)) if g is not None else None


def model_bytes(ctx: CheckContext) -> tuple[arithmetic.ModelBytes | None, str]:
    """(ModelBytes, "") from the model group's arithmetic, or (None, why not)."""
    model = ctx.facts.model
    if model is None:
        return None, "no model given (--model)"
    try:
        return arithmetic.model_bytes(model), ""
    except arithmetic.ArithmeticUnavailable as exc:
        return None, str(exc)
    except Exception as exc:  # noqa: BLE001 - a broken model fact must not take this check down
        return None, f"model size unreadable: {type(exc).__name__}: {exc}"


def hbm_gbs(gpu: GpuFacts | None, series: GpuSeries | None = None) -> float | None:
    """The card's datasheet memory bandwidth from the knowledge base, by NVML name."""
    name = series.name if series is not None and series.name else (gpu.name if gpu is not None else None)
    mem = gpu.memory_total_mib if gpu is not None and known(gpu.memory_total_mib) else None
    spec = spec_for_name(name, mem) if isinstance(name, str) else None
    return spec.bandwidth_gbs if spec else None


def value(x: T | Unknown | None) -> T | None:
    """A Maybe as a plain value for evidence: the value, or None when unknown."""
    return x if known(x) else None


def reason(x: object) -> str:
    return x.reason if isinstance(x, Unknown) else "unknown"


def pct(fraction: float | None) -> str:
    return "n/a" if fraction is None else f"{fraction * 100:.0f}%"
