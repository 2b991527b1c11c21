"""The log analysis as data: what matched (grouped), what the machine says about it, and what stayed unexplained.

It is its own versioned document (schema "v100-doctor/log-analysis/1", doctor/schema/log-analysis-1.json)
rather than a section of the report: `explain --no-live` has no machine facts at all, and a bundle
keeps the two side by side. Every count is exact; only the lists are capped (see LIST_CAP, GROUP_CAP).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from doctor.model.ids import CheckId
from doctor.model.serialize import strict_json, to_jsonable, undecodable_escaped
from doctor.version import __version__

SCHEMA = "v100-doctor/log-analysis/1"
LIST_CAP = 20  # line numbers kept per group
GROUP_CAP = 200  # distinct groups kept per kind; lines of further kinds are still counted


@dataclass(frozen=True)
class Confirmation:
    verdict: str  # confirmed | ruled-out | cannot-tell
    reason: str
    check: CheckId | str | None = None  # the check whose finding decided it
    check_status: str | None = None


@dataclass(frozen=True)
class MatchGroup:
    signature: str
    engine: str
    checks: tuple[CheckId, ...]  # the signature's pitfall ids
    severity: str
    title: str
    fix: str
    commands: tuple[str, ...]
    source: str
    first_line: int
    text: str  # the first matching line (cut to 500 characters)
    matched: str  # the part of it the pattern matched
    numbers: dict[str, Any]
    count: int
    lines: tuple[int, ...]
    confirmation: Confirmation | None = None
    consequence_of: str | None = None  # the signature of a match in this log that this one follows from (shown under it)

    @property
    def check(self) -> CheckId:
        return self.checks[0]


@dataclass(frozen=True)
class EngineLine:
    line: int
    text: str  # cut to 200 characters
    why: str  # what the line shows: "Ollama's logfmt lines (source=….go msg=…)"


@dataclass(frozen=True)
class LogEngine:
    """The engine the fixes are worded for, and the evidence: --engine, or the log's own lines."""

    engine: str | None  # an Engine id; None: the log shows none
    label: str  # "Ollama", "llama.cpp (llama-cpp-python)", "unknown"
    flavour: str = ""  # a front end with fixes of its own: "llama-cpp-python", "LM Studio", "TabbyAPI"
    why: str = ""  # "--engine" | "the log's own lines" | why none was found
    lines: tuple[EngineLine, ...] = ()
    torch: bool = False  # the log shows PyTorch (a torch program whose engine it does not name)


UNKNOWN_ENGINE = LogEngine(None, "unknown", why="no line of the log names an engine")


@dataclass(frozen=True)
class UnexplainedGroup:
    kind: str  # error | warning
    example: str  # the first line of this kind; repeats differ only in numbers and quoted values
    first_line: int
    count: int
    lines: tuple[int, ...]
    # what explain says of it: every quoted error line carries an explanation or says it was not recognised
    explanation: str = "not recognised: no known pitfall's message matches this line"


@dataclass(frozen=True)
class Unexplained:
    error_lines: int
    warning_lines: int
    groups: tuple[UnexplainedGroup, ...]  # most frequent first
    lines_in_dropped_groups: int = 0  # counted, but their kind was past GROUP_CAP


@dataclass(frozen=True)
class LogStats:
    name: str
    bytes: int
    lines: int
    encoding: str
    undecodable_lines: int  # examined lines (those with a keyword) whose bytes are not valid in `encoding` (shown as U+FFFD)
    long_line_pieces: int  # lines longer than 64 KiB are matched in pieces
    matched_lines: int
    framing_lines: int
    ordinary_lines: int
    seconds: float
    mb_per_s: float | None
    prefilter: str  # which keyword search ran (ahocorasick-rs or bytes.find)


@dataclass(frozen=True)
class PlanHint:
    field: str
    value: Any
    line: int


@dataclass(frozen=True)
class LogAnalysis:
    log: LogStats
    matches: tuple[MatchGroup, ...]
    unexplained: Unexplained
    plan_hints: tuple[PlanHint, ...] = ()
    engine: LogEngine = UNKNOWN_ENGINE
    facts_source: str = "none"  # live | replay:<file> | none (why)
    plan_used: dict[str, Any] = field(default_factory=dict)
    created_at: str = ""
    doctor_version: str = __version__
    schema: str = SCHEMA


def analysis_to_dict(analysis: LogAnalysis) -> dict:
    data = to_jsonable(analysis)
    return {"schema": data.pop("schema"), **data}


def analysis_to_json(analysis: LogAnalysis) -> str:
    return undecodable_escaped(strict_json(analysis_to_dict(analysis), indent=2, ensure_ascii=False))

