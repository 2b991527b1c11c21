"""The JSON-lines protocol between the probe worker and the runner, and the probe's spec.

Kept free of torch and of the doctor's heavier modules: the worker imports it before torch,
and a test can speak it from a fake worker.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import IO, Any

from doctor.knowledge.signatures import PROBE_KINDS
from doctor.model.events import GpuReading, ProbeCancelled, ProbeEvent, ProbeFailed, ProbeFinished, ProbePhase, ProbeProgress, ProbeRate, ProbeTimedOut
from doctor.model.ids import FailureKind
from doctor.model.serialize import to_jsonable

PROTOCOL = 1
EVENTS = ("phase", "progress", "sample", "mode", "result", "error")
PHASES = ("start", "import", "build", "bandwidth", "load", "prefill", "warmup", "decode", "unload", "reload", "streams",
          "done")
TIMED_PHASES = ("prefill", "decode")  # the runner samples NVML while these run
# The kinds an error event carries: those recognised from an error's text (the signature table),
# and those the worker decides itself.
ERROR_KINDS = PROBE_KINDS + (FailureKind.NO_CUDA, FailureKind.BAD_SPEC, FailureKind.INTERNAL)


@dataclass(frozen=True)
class ProbeSpec:
    """What to measure, and how. Defaults follow the seed: 3 runs of 128 tokens after a real warm-up."""

    model_path: str
    max_seq_len: int | None = None  # None: 4096, capped by the model's own limit (said so in the result)
    cache_mode: str = "fp16"  # a key of doctor/knowledge/kv_cache.py KV_CACHE_MODES
    gpu_split: tuple[float, ...] | None = None  # GB per GPU; None = autosplit
    gpu_index: int = 0
    prompt_tokens: int = 128  # the fixed prompt; decode is timed after it
    warmup_tokens: int = 256  # covers ExLlamaV2's 200-call autotune and the 205th-call graph capture
    runs: int = 3  # the settled window: this many consecutive runs within settle_pct of each other
    settle_pct: float = 3.0  # (max - min) / median of the window that counts as settled
    settle_budget_s: float = 45.0  # more runs until the window settles, for at most this long
    max_runs: int = 15
    tokens: int = 128  # decode tokens per timed run
    second_pass: str = "auto"  # auto | always | never: reload the model and measure again
    measure_bandwidth: bool = True
    label: str = ""  # e.g. "synthetic fp16 6.0 GB"
    streams: tuple[int, ...] = ()  # `probe --streams`: concurrent jobs per round (doctor/probe/exl2_streams.py)


def spec_to_json(spec: ProbeSpec) -> str:
    return json.dumps(asdict(spec))


def spec_from_json(text: str) -> ProbeSpec:
    data = json.loads(text)
    if not isinstance(data, dict) or not isinstance(data.get("model_path"), str):
        raise ValueError("the probe spec must be a JSON object with a model_path")
    known = {k: v for k, v in data.items() if k in ProbeSpec.__dataclass_fields__}
    if known.get("gpu_split") is not None:
        known["gpu_split"] = tuple(float(x) for x in known["gpu_split"])
    if known.get("streams") is not None:
        known["streams"] = tuple(int(x) for x in known["streams"])
    return ProbeSpec(**known)


@dataclass
class Emitter:
    """Writes events to the protocol stream (the worker's real stdout), one flushed line each."""

    stream: IO[str]
    sent: list[str] = field(default_factory=list)

    def emit(self, event: str, **fields: Any) -> None:
        line = json.dumps({"event": event, **fields}, default=_jsonable)
        self.stream.write(line + "\n")
        self.stream.flush()
        self.sent.append(event)

    def phase(self, phase: str, message: str, total: float | None = None, **extra: Any) -> None:
        self.emit("phase", phase=phase, message=message, total=total, **extra)

    def progress(self, phase: str, done: float, total: float | None, unit: str, message: str = "") -> None:
        self.emit("progress", phase=phase, done=done, total=total, unit=unit, message=message)

    def error(self, kind: FailureKind, phase: str, message: str, detail: str = "") -> None:
        self.emit("error", kind=kind, phase=phase, message=message, detail=detail[-4000:])


def _jsonable(obj: Any) -> Any:
    return to_jsonable(obj)


def parse_event(line: str) -> dict | None:
    """One protocol line -> its event dict; None for anything else (a stray print is not an event)."""
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        data = json.loads(line)
    except ValueError:
        return None
    if isinstance(data, dict) and data.get("event") in EVENTS:
        return data
    return None


def screen_events(wire: dict[str, Any]) -> tuple[ProbeEvent, ...]:
    """One JSON-lines event as the typed events a screen shows: the event itself, then a GpuReading when the
    line carries NVML readings. A line of an unknown kind, or with fields of the wrong type, gives only what fits."""
    kind = wire.get("event")
    events: list[ProbeEvent] = []
    if kind == "phase":
        events.append(ProbePhase(_text(wire.get("phase")), _text(wire.get("message")), _number(wire.get("total"))))
    elif kind == "progress":
        events.append(ProbeProgress(_number(wire.get("done")) or 0.0, _number(wire.get("total")), _text(wire.get("message")),
                                    _text(wire.get("unit"))))
    elif kind == "sample" and (tok_s := _number(wire.get("tok_s"))) is not None:
        run = _number(wire.get("run"))
        events.append(ProbeRate(tok_s, _text(wire.get("phase")), int(run) if run is not None else None,
                                _number(wire.get("cpu_wall")), _number(wire.get("faults_per_token"))))
    elif kind == "result":
        events.append(ProbeFinished(_text(wire.get("summary"))))
    elif kind == "error":
        events.append(ProbeFailed(_text(wire.get("message")) or "the probe failed", _text(wire.get("phase"))))
    elif kind == "timeout":
        events.append(ProbeTimedOut(_text(wire.get("phase")) or "a phase"))
    elif kind == "cancelled":
        events.append(ProbeCancelled(_text(wire.get("phase"))))
    readings = {name: _number(wire.get(name)) for name in GpuReading.__dataclass_fields__}
    if any(v is not None for v in readings.values()):
        events.append(GpuReading(**readings))
    return tuple(events)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _text(value: Any) -> str:
    return "" if value is None else str(value)
