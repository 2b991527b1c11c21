"""The probe panel's state, folded from the probe runner's JSON-lines events. Plain data, no textual.

Only display state lives here (phase, progress, last readings); every number comes from an event.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

SPARK_POINTS = 120  # the last decode readings kept for the sparkline


@dataclass(frozen=True)
class ProbeView:
    state: str = "idle"  # idle | running | done | failed | skipped | cancelled
    phase: str = ""
    message: str = ""
    done: float = 0.0
    total: float | None = None  # None: no measure of progress in this phase
    tok_s: tuple[float, ...] = ()
    mem_clock_mhz: float | None = None
    mem_clock_max_mhz: float | None = None
    temperature_c: float | None = None
    pcie_rx_mbs: float | None = None
    result: str = ""
    reported_tok_s: float | None = None  # the probe's own decode figure (median of its timed runs), once finished
    error: str = ""


def fold(view: ProbeView, event: dict[str, Any]) -> ProbeView:
    """The view after one event; GPU readings (an NVML sample's fields) are taken from any event that has them."""
    view = _take_gpu_readings(view, event)
    kind = event.get("event")
    if kind == "phase":
        return replace(view, state="running", phase=str(event.get("phase", "")), message=str(event.get("message", "")),
                       done=0.0, total=_number(event.get("total")))
    if kind == "progress":
        return replace(view, state="running", done=_number(event.get("done")) or 0.0,
                       total=_number(event.get("total")) or view.total,
                       message=str(event.get("message") or view.message))
    if kind == "sample":
        tok_s = _number(event.get("tok_s"))
        return replace(view, tok_s=(view.tok_s + (tok_s,))[-SPARK_POINTS:]) if tok_s is not None else view
    if kind == "result":
        return replace(view, state="done", phase="done", done=1.0, total=1.0, result=str(event.get("summary", "")))
    if kind == "error":
        return replace(view, state="failed", error=str(event.get("message", "the probe failed")))
    if kind == "timeout":
        return replace(view, state="failed", error=f"timed out in {event.get('phase', 'a phase')}")
    if kind == "skipped":
        return replace(view, state="skipped", error=str(event.get("message", "")))
    if kind == "cancelled":
        return replace(view, state="cancelled")
    return view


GPU_READINGS = ("mem_clock_mhz", "mem_clock_max_mhz", "temperature_c", "pcie_rx_mbs")


def _take_gpu_readings(view: ProbeView, event: dict[str, Any]) -> ProbeView:
    changes = {name: _number(event[name]) for name in GPU_READINGS if _number(event.get(name)) is not None}
    return replace(view, **changes) if changes else view


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
