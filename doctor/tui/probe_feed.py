"""Turns a ProbeReport and a verdict into the panels' display data (ProbeView, VerdictView).

No textual here, no diagnosis either: the probe itself runs in doctor/run/live_probe.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from doctor.tui.probe_state import ProbeView
from doctor.tui.verdict_state import CauseBar, VerdictView

if TYPE_CHECKING:
    pass


def probe_view(probe: Any) -> ProbeView | None:
    """A finished probe (a ProbeReport, or its JSON from a saved report) as the probe panel draws it."""
    from doctor.model.probe_results import ProbeReport

    probe = _as(ProbeReport, probe)
    if probe is None:
        return None
    state = {"ok": "done", "cancelled": "cancelled"}.get(probe.status, "failed")
    speeds = tuple(run.tok_s for p in probe.result.passes for run in p.runs) if probe.result else ()
    return ProbeView(state=state, phase="done", done=1.0, total=1.0, tok_s=speeds,
                     reported_tok_s=probe.result.decode_tok_s if probe.result else None,
                     result=probe.summary if state == "done" else "",
                     error=f"{probe.status}: {probe.summary}" if state == "failed" else "",
                     **_last_readings(probe))


def _last_readings(probe: Any) -> dict:
    series = probe.samples
    gpus = getattr(series, "gpus", ()) if series is not None else ()
    if not gpus or not gpus[0].samples:
        return {}
    g, last = gpus[0], gpus[0].samples[-1]
    return {"mem_clock_mhz": last.mem_clock_mhz, "mem_clock_max_mhz": g.mem_clock_max_mhz,
            "temperature_c": last.temperature_c, "pcie_rx_mbs": last.pcie_rx_mbs}


# short labels for the bars; the cause's full title and evidence stay in the report and the headline
CAUSE_LABELS = {"kv-reads": "KV cache reads", "throttled-clocks": "throttled clocks", "cpu-offload": "CPU offload",
                "host-bound": "host-bound", "kernel-path": "kernel path", "gpu-contention": "other GPU procs",
                "unexplained": "unexplained"}


def verdict_view(verdict: Any) -> VerdictView | None:
    """The verdict (doctor.verdict.build.Verdict, or its JSON) as bars: ranked causes, fix first, the 64 tok/s reference."""
    from checks.knowledge.gpus import SEED_REFERENCE
    from doctor.verdict.causes import CAUSE_LABELS
    from doctor.model.verdict import Verdict

    v = _as(Verdict, verdict)
    if v is None:
        return None
    fix = v.fixes[0] if v.fixes else None
    fix_first = ""
    if fix is not None:
        gain = f" (+{fix.expected_gain_tok_s:.1f} tok/s expected)" if fix.expected_gain_tok_s else ""
        fix_first = fix.action + gain
    limit_options = "; ".join(o.action.split(":")[0] for o in v.options)
    causes = tuple(CauseBar(CAUSE_LABELS.get(c.id, c.id), c.share, c.title) for c in v.causes)
    reference = float(SEED_REFERENCE["measured_tok_s"]) if v.reference else None
    return VerdictView(measured_tok_s=v.measured_tok_s, ceiling_tok_s=v.ceiling_tok_s, headline=v.headline,
                       fix_first=fix_first, limit_options=limit_options, reference_tok_s=reference,
                       reference_label=f"of V100 ref {reference:g}" if reference else "", causes=causes)


def _as(cls: type, value: Any) -> Any:
    """The dataclass itself, or rebuilt from a saved report's JSON; None when it does not fit."""
    if value is None or isinstance(value, cls):
        return value
    from doctor.model.serialize import LoadError, from_jsonable

    try:
        return from_jsonable(cls, value)
    except (LoadError, TypeError, ValueError):
        return None
