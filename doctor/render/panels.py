"""What the TUI's probe and verdict panels draw, as plain data (no textual): built from the typed probe
events while the probe runs, and from a finished ProbeReport and Verdict (or their saved JSON) afterwards.

The screen only draws these; every number comes from an event or the report.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from doctor.model import server_summary
from doctor.model.engine_verdict import EngineVerdict
from doctor.model.events import (
    GpuReading,
    ProbeCancelled,
    ProbeEvent,
    ProbeFailed,
    ProbeFinished,
    ProbePhase,
    ProbeProgress,
    ProbeRate,
    ProbeSkipped,
    ProbeTimedOut,
)
from doctor.model.findings import Status
from doctor.model.ids import CheckId
from doctor.model.probe_results import ProbeReport
from doctor.model.reference import SEED_REFERENCE
from doctor.model.serialize import LoadError, from_jsonable
from doctor.model.verdict import CAUSE_LABELS, Verdict

UNEXPLAINED = "unexplained"  # the verdict's label for the share of the gap no evidence accounts for
SPARK_POINTS = 120  # the last decode readings kept for the sparkline
GPU_READINGS = tuple(f.name for f in fields(GpuReading))


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


def apply_probe_event(view: ProbeView, event: ProbeEvent) -> ProbeView:
    """The view after one probe event."""
    if isinstance(event, GpuReading):
        return replace(view, **{name: value for name in GPU_READINGS if (value := getattr(event, name)) is not None})
    if isinstance(event, ProbePhase):
        return replace(view, state="running", phase=event.phase, message=event.message, done=0.0, total=event.total)
    if isinstance(event, ProbeProgress):
        return replace(view, state="running", done=event.done, total=event.total or view.total,
                       message=event.message or view.message)
    if isinstance(event, ProbeRate):
        return replace(view, tok_s=(view.tok_s + (event.tok_s,))[-SPARK_POINTS:])
    if isinstance(event, ProbeFinished):
        return replace(view, state="done", phase="done", done=1.0, total=1.0, result=event.summary)
    if isinstance(event, ProbeFailed):
        return replace(view, state="failed", error=event.message)
    if isinstance(event, ProbeTimedOut):
        return replace(view, state="failed", error=f"timed out in {event.phase}")
    if isinstance(event, ProbeSkipped):
        return replace(view, state="skipped", error=event.reason)
    if isinstance(event, ProbeCancelled):
        return replace(view, state="cancelled")
    return view


def probe_view(probe: Any) -> ProbeView | None:
    """A finished probe (a ProbeReport, or its JSON from a saved report) as the probe panel draws it."""
    probe = _as(ProbeReport, probe)
    if probe is None:
        return None
    if probe.streams is not None:  # probe --streams: each round's total tok/s as the spark line
        state = "done" if probe.status == "ok" else "failed"
        totals = tuple(r.total_tok_s for r in probe.streams.rounds)
        return ProbeView(state=state, phase="done", done=1.0, total=1.0, tok_s=totals,
                         reported_tok_s=max(totals) if totals else None,
                         result=f"streams: {probe.summary}" if state == "done" else "",
                         error=f"streams: {probe.summary}" if state != "done" else "")
    if probe.of_engine:
        return _engine_probe_view(probe)
    state = {"ok": "done", "cancelled": "cancelled"}.get(probe.status, "failed")
    speeds = tuple(run.tok_s for p in probe.result.passes for run in p.runs) if probe.result else ()
    return ProbeView(state=state, phase="done", done=1.0, total=1.0, tok_s=speeds,
                     reported_tok_s=probe.result.decode_tok_s if probe.result else None,
                     result=probe.summary if state == "done" else "",
                     error=f"{probe.status}: {probe.summary}" if state == "failed" else "",
                     **_last_readings(probe))


def _engine_probe_view(probe: ProbeReport) -> ProbeView:
    """An engine's own probe (llama.cpp, Transformers, a server) in the same panel: its runs, its median."""
    measured = probe.llamacpp[-1] if probe.llamacpp else probe.transformers or probe.server
    state = {"ok": "done", "cancelled": "cancelled", "skipped": "skipped"}.get(probe.status, "failed")
    return ProbeView(state=state, phase="done", done=1.0, total=1.0,
                     tok_s=tuple(r.tok_s_wall for r in measured.runs) if measured is not None else (),
                     reported_tok_s=measured.median_tok_s if measured is not None else None,
                     result=f"{probe.engine}: {probe.summary}" if state == "done" else "",
                     error=f"{probe.engine}: {probe.summary}" if state != "done" else "", **_last_readings(probe))


def engine_verdict_view(verdict: Any) -> VerdictView | None:
    """An engine probe's verdict (doctor.model.engine_verdict.EngineVerdict, or its JSON) as the verdict panel's bars:
    measured against the ceiling, the engine's causes named (no shares: the engine verdicts do not split the gap)."""
    v = _as(EngineVerdict, verdict)
    if v is None or v.measured_tok_s is None or v.ceiling_tok_s is None:
        return None
    labels = {str(k): label for k, label in CAUSE_LABELS.items()}
    causes = tuple(CauseBar(labels.get(str(c.get("cause", "")), str(c.get("cause", ""))), None, str(c.get("text", "")))
                   for c in v.causes)
    return VerdictView(measured_tok_s=v.measured_tok_s, ceiling_tok_s=v.ceiling_tok_s,
                       headline=f"{v.engine}: {v.summary}" + (f"; {v.unsettled}" if v.unsettled else ""), causes=causes)


def report_verdict_view(report: Any) -> VerdictView | None:
    """The verdict panel of a report: the ExLlamaV2 probe's verdict, or the engine's own probe's."""
    if getattr(report, "verdict", None) is not None:
        return verdict_view(report.verdict)
    engine = getattr(report, "engine_verdict", None)
    return engine_verdict_view(engine) if engine is not None else None


def _last_readings(probe: Any) -> dict:
    series = probe.samples
    gpus = getattr(series, "gpus", ()) if series is not None else ()
    if not gpus or not gpus[0].samples:
        return {}
    g, last = gpus[0], gpus[0].samples[-1]
    return {"mem_clock_mhz": last.mem_clock_mhz, "mem_clock_max_mhz": g.mem_clock_max_mhz,
            "temperature_c": last.temperature_c, "pcie_rx_mbs": last.pcie_rx_mbs}


@dataclass(frozen=True)
class CauseBar:
    label: str
    share: float | None  # of the gap, 0..1; None: present, but the evidence gives no size
    note: str = ""


@dataclass(frozen=True)
class VerdictView:
    measured_tok_s: float
    ceiling_tok_s: float
    headline: str = ""
    fix_first: str = ""
    limit_options: str = ""  # at the card's limit: the levers, offered as options, never as "Fix first"
    reference_tok_s: float | None = None  # 64 tok/s: the seed's V100 result, shown on V100-class cards
    reference_label: str = ""
    causes: tuple[CauseBar, ...] = ()


def verdict_view(verdict: Any) -> VerdictView | None:
    """The verdict (doctor.model.verdict.Verdict, or its JSON) as bars: ranked causes, fix first, the 64 tok/s reference."""
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

    try:
        return from_jsonable(cls, value)
    except (LoadError, TypeError, ValueError):
        return None


# ---- the story view: one recorded case per stage, side by side --------------------------------------------------
@dataclass(frozen=True)
class StageView:
    """One stage of a recorded case: what ran, how fast against the ceiling, the cause named and the fix."""

    name: str  # the example's name
    setup: str  # engine · model · cache · context, from the recorded probe
    measured_tok_s: float | None
    ceiling_tok_s: float | None
    cause: str  # the verdict's top cause and its share of the gap
    fix: str  # the fix that leads to the next stage, or the options at the card's limit
    headline: str


@dataclass(frozen=True)
class CaseView:
    card: str  # the recorded GPU
    stages: tuple[StageView, ...]

    @property
    def label(self) -> str:
        speeds = [f"{s.measured_tok_s:.0f}" for s in self.stages if s.measured_tok_s is not None]
        return f"{self.card}: {' → '.join(speeds)} tok/s" if speeds else self.card


def stage_view(name: str, report: Any) -> StageView:
    """A replayed example as one story stage; every figure is the report's (its probe and today's verdict)."""
    verdict = verdict_view(report.verdict) if report.verdict is not None else None
    causes = verdict.causes if verdict else ()
    named = [c for c in causes if c.label != UNEXPLAINED]
    cause = ", ".join(_share(c) for c in named[:1])
    rest = [c for c in causes if c.label == UNEXPLAINED and (c.share or 0) >= 0.5]
    if rest:
        cause += f"; {rest[0].share:.0%} unexplained"
    fix = ""
    if verdict is not None:
        fix = verdict.fix_first or (f"at the card's limit; options: {verdict.limit_options}" if verdict.limit_options else "")
    return StageView(name=name, setup=_setup_line(report.probe), headline=verdict.headline if verdict else "",
                     measured_tok_s=verdict.measured_tok_s if verdict else None,
                     ceiling_tok_s=verdict.ceiling_tok_s if verdict else None, cause=cause, fix=fix)


def _share(cause: CauseBar) -> str:
    return f"{cause.label} ({cause.share:.0%} of the gap)" if cause.share is not None else cause.label


def story_cases(examples: list[tuple[str, Any]]) -> tuple[CaseView, ...]:
    """(name, replayed report) pairs in story order, grouped by the recorded card: the V100's stages, then the H200."""
    cases: dict[str, list[StageView]] = {}
    for name, report in examples:
        cases.setdefault(_card(report), []).append(stage_view(name, report))
    return tuple(CaseView(card, tuple(stages)) for card, stages in cases.items())


def _card(report: Any) -> str:
    gpu = report.facts.gpu(report.plan.gpu_index) if report.facts is not None else None
    name = getattr(gpu, "name", None)
    return name if isinstance(name, str) and name else "unknown card"


def _setup_line(probe: Any) -> str:
    result = getattr(probe, "result", None)
    if result is None:
        return ""
    model = str(result.model_path or "").split(" (")[0].rstrip("/").rsplit("/", 1)[-1]
    parts = [str(result.engine).split(" (")[0], model, f"{result.cache_mode} cache" if result.cache_mode else "",
             f"{result.max_seq_len} ctx" if result.max_seq_len else ""]
    return " · ".join(p for p in parts if p)


# ---- what one short line says ----------------------------------------------------------------------------------
def first_line(text: str) -> str:
    """A verdict headline's first sentence: what the one-pane layout of a small terminal keeps."""
    head = text.split("\n", 1)[0]
    cut = head.find(". ")
    return head[: cut + 1] if cut > 0 else head


def no_gpu_hint(report: Any) -> str:
    """A live run on a machine without a usable GPU and no --target-gpu: what the doctor can still do here."""
    gpu = report.finding(CheckId.GPU_PRESENT)
    if report.source.recorded or report.plan.target_gpu or gpu is None or gpu.status is Status.PASS:
        return ""
    if "nvml_stopped" in gpu.evidence:  # the GPU is here: its driver stopped answering while watch sampled it
        return ""
    return "No GPU here: plan for a card with --target-gpu NAME (see --list-gpus), or try `v100-doctor demo`."


def no_probe_hint(report: Any) -> str:
    """A run with a GPU but no --model: why no probe ran and no verdict was given, and what to add (a replay cannot
    time anything: it says where the probe runs)."""
    if report.plan.model_path or report.probe is not None or report.verdict is not None:
        return ""
    gpu = report.finding(CheckId.GPU_PRESENT)
    if gpu is None or gpu.status is not Status.PASS:
        return ""  # no GPU to time: no_gpu_hint says what the doctor can still do
    samples = report.facts.samples
    server = samples.server if samples is not None else None
    if server is not None:  # watch --engine-url: the server's own figures are the speed; `probe` times it
        where = " on that machine" if report.source.recorded else ""
        return (f"No timed probe of our own: {server_summary.label(server.kind)}'s served speed is in server-load; `v100-doctor probe "
                f"--engine-url {server.url} --streams 1,2,4`{where} times it with concurrent streams and judges its speed.")
    if report.source.recorded:
        return ("Recorded without a model, so no timed probe and no verdict on speed: add --model DIR to judge a model "
                "on the recorded card; the probe times a model only on the machine itself (`v100-doctor --model DIR` "
                "there).")
    return ("No timed probe, so no verdict on speed: add --model DIR (or ORG/NAME) to time your model on this card, "
            "or run `v100-doctor probe --synthetic` to time ExLlamaV2 here without a download.")
