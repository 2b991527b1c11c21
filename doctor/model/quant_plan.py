"""What `v100-doctor plan` answers, as data: the quantized versions of a model, and for each version, cache type
and card whether it fits, how fast it should run and how to get it.

The checks build it (doctor/plan/), Hub discovery fills the candidates (doctor/facts/hub/quants.py), renderers
draw it (doctor/render/plan_text.py, plan_markdown.py); the wire form is schema v100-doctor/plan/1
(doctor/schema/plan-1.json).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from doctor.model.range import Range
from doctor.model.serialize import strict_json

PLAN_SCHEMA = "v100-doctor/plan/1"


@dataclass(frozen=True)
class QuantCandidate:
    """One downloadable (or convertible) version of the model."""

    fmt: str  # exl2 | gptq | awq | gguf | fp16
    label: str  # "EXL2 3.75 bpw", "GGUF Q4_K_M"
    repo: str | None  # Hub repo; None: not on the Hub (convert it yourself, or the local folder)
    revision: str | None = None  # the EXL2 branch ("3.75bpw")
    filename: str | None = None  # the GGUF file; for a version on disk, its folder
    bpw: float | None = None  # bits per weight (EXL2: declared; GGUF: its type's, or from the file size)
    gguf_type: str | None = None  # Q4_K_M ...
    group_size: int | None = None  # GPTQ/AWQ
    download_bytes: int | None = None  # what the download weighs, from the Hub listing
    found: str = "hub"  # hub | catalogue (on the Hub, as the embedded catalogue lists it) | cache | local | config (only
    # config.json on disk) | convert (made with a converter)


YAML_STEPS = frozenset({"config"})  # a plan row's steps that are YAML files; every other step is a shell line


def step_language(step: str) -> str:
    """The language of a plan step's text, for a Markdown code block of its own: "yaml" or "sh"."""
    return "yaml" if step in YAML_STEPS else "sh"


@dataclass(frozen=True)
class Estimate:
    """A figure with its range and where it comes from; `estimate` says it is not a measurement of this setup."""

    low: float
    mid: float
    high: float
    source: str
    confidence: str  # P measured by this project, S published, K recalled / assumed
    estimate: bool = True


TokS = Range  # a speed range, tok/s: the source and confidence are the row's `concurrency_source`


@dataclass(frozen=True)
class StreamsEstimate:
    """Batched decode at `streams` concurrent streams, each with `context_per_stream` tokens of context (an estimate:
    doctor/plan/concurrency.py)."""

    streams: int
    context_per_stream: int
    total_tok_s: TokS
    per_stream_tok_s: TokS


KNEE_GAIN = 0.10  # within this share of the highest total speed: at the knee


def knee(entries: tuple[StreamsEstimate, ...]) -> int:
    """The fewest streams that reach within KNEE_GAIN of the highest total speed in `entries`: past it, more streams
    add little in total and cost each stream speed. The last entry when the total still rises there."""
    if not entries:
        return 0
    top = max(e.total_tok_s.mid for e in entries)
    return next(e.streams for e in entries if e.total_tok_s.mid >= top * (1 - KNEE_GAIN))


def still_rising(entries: tuple[StreamsEstimate, ...]) -> bool:
    """Whether the last doubling still added KNEE_GAIN or more of total speed (the knee lies beyond the ladder)."""
    return len(entries) > 1 and entries[-1].total_tok_s.mid >= entries[-2].total_tok_s.mid * (1 + KNEE_GAIN)


@dataclass(frozen=True)
class Offload:
    """Part of the model kept in host RAM so the rest fits the card (doctor/plan/offload.py)."""

    kind: str  # "experts": the routed experts of the first `layers` layers (llama.cpp --n-cpu-moe); "layers": whole
    # layers left on the CPU (-ngl, Ollama's num_gpu)
    layers: int
    host_bytes: int  # host RAM the offloaded weights and the token embedding take (mmap'd from the file)
    host_read_bytes: int  # what one decoded token reads of them, at the host's memory bandwidth
    how: str  # the flag, and what Ollama can do
    source: str


@dataclass(frozen=True)
class PlanRow:
    option: QuantCandidate
    engine: str  # exllamav2 | llama.cpp
    cards: tuple[str, ...]  # target-gpu keys; more than one: a split over them, in that order
    cache: str  # the engine's cache type: fp16, q8, q6, q4 (ExLlamaV2); f16, q8_0, q4_0 (llama.cpp)
    context: int
    fits: bool
    peak_bytes: tuple[int, ...]  # per GPU, the engine's fixed buffers and the draft model included
    capacity_bytes: tuple[int, ...]  # per GPU: the idle card's memory as NVML reports it
    draft_bytes: int  # the draft model's weights and cache, on the first GPU
    ceiling_tok_s: float  # single stream, with half the context in the cache (mid-conversation)
    speed: Estimate  # expected single-stream tok/s with half the context in the cache (doctor/knowledge/arithmetic/decode_time.py)
    speed_full: Estimate  # the same with the whole context in the cache: the slowest point of a conversation
    max_context: int  # the longest context that fits with this option and cache (0: none)
    streams: int  # full-context streams the cache budget holds (an estimate)
    quality: str  # bpw and a published quality figure where one exists
    quality_source: str
    commands: dict[str, str] = field(default_factory=dict)  # the engine's steps in order (download, ..., config, run)
    why_not: str = ""  # when it does not fit: what overflows, by how much
    concurrency: tuple[StreamsEstimate, ...] = ()  # 1, 2, 4, 8 ... streams, up to what the cache holds
    concurrency_source: str = ""  # how the batched figures are made, what the engine batches, with sources
    knee: int = 0  # the stream count after which another doubling adds under 10% of total speed (0: not estimated)
    speculative: Estimate | None = None  # single-stream tok/s with the --draft model (doctor/plan/speculative.py)
    offload: Offload | None = None  # part of the model in host RAM (None: all of it on the GPU)

    @property
    def bpw(self) -> float | None:
        return self.option.bpw


@dataclass(frozen=True)
class PlanAnswer:
    """One line of the answer: the row chosen (None: none qualifies) and why, with numbers."""

    question: str
    row: PlanRow | None
    context: int  # for the longest-context answer: the longest context at the asked speed
    sentence: str


@dataclass(frozen=True)
class QuantPlan:
    model: str
    model_source: str  # how the model and its versions were found (Hub, cache, local)
    shape: str  # "64 layers, hidden 5120, 40/8 heads" ...
    cards: tuple[str, ...]  # the --target-gpu keys asked
    context: int
    min_tok_s: float | None
    min_bpw: float
    engine: str | None  # --engine, None: every engine that loads the format
    rows: tuple[PlanRow, ...]
    answers: tuple[PlanAnswer, ...]
    notes: tuple[str, ...] = ()
    schema: str = PLAN_SCHEMA


def plan_to_dict(plan: QuantPlan) -> dict:
    """The wire form (schema v100-doctor/plan/1): the dataclasses as plain JSON types, estimates and sources kept."""
    doc = asdict(plan)
    doc["cards"], doc["rows"] = list(plan.cards), [_row(r) for r in plan.rows]
    doc["answers"] = [{"question": a.question, "row": plan.rows.index(a.row) if a.row in plan.rows else None,
                       "context": a.context, "sentence": a.sentence} for a in plan.answers]
    doc["notes"] = list(plan.notes)
    return {"schema": doc.pop("schema"), **doc}


def row_to_dict(r: PlanRow) -> dict:
    """One row's wire form, as in the plan's `rows` (fit's results carry the same)."""
    return _row(r)


def _row(r: PlanRow) -> dict:
    d = asdict(r)
    d["cards"], d["peak_bytes"], d["capacity_bytes"] = list(r.cards), list(r.peak_bytes), list(r.capacity_bytes)
    d["concurrency"] = [asdict(c) for c in r.concurrency]
    return d


def plan_to_json(plan: QuantPlan) -> str:
    return strict_json(plan_to_dict(plan), indent=2, ensure_ascii=False)
