"""What `explain` asks an engine about a pasted log: the lines that show the engine ran, and its fix for each fault class.

Each engine's package holds its own answers (doctor/engines/<engine>/log.py), written in the words of its adapter's
FixVocabulary; doctor/engines/logs.py collects them. The fault classes are doctor/knowledge/signatures.py's FIX_CLASSES.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable

from doctor.model.ids import Engine

__all__ = ["EngineLog", "LogFix", "LogMarker"]


@dataclass(frozen=True)
class LogMarker:
    """A line only this engine (or this flavour of it) prints: its start-up banner, its logger's format, its paths."""

    pattern: str  # searched (case-sensitive) in a line
    why: str  # what the line is, for the report: "Ollama's logfmt lines (source=….go msg=…)"
    flavour: str = ""  # a front end of the engine with fixes of its own ("llama-cpp-python", "LM Studio"); "": the engine
    decisive: bool = False  # a wrapper's own line: it names the engine even where another engine's lines outnumber it

    @cached_property
    def regex(self) -> re.Pattern:
        return re.compile(self.pattern)


@dataclass(frozen=True)
class LogFix:
    """A fix in the engine's own terms. `{arch}` is filled with the card's compute capability without the dot when the
    log names it (e.g. 70), else with a placeholder that says what to put there."""

    text: str
    commands: tuple[str, ...] = ()


@dataclass(frozen=True)
class EngineLog:
    engine: Engine
    label: str  # how the report names it
    markers: tuple[LogMarker, ...]
    fixes: dict[str, LogFix]  # fault class -> fix
    flavour_fixes: dict[str, dict[str, LogFix]] = field(default_factory=dict)  # flavour -> fault class -> fix
    uses_torch: bool = False  # its fixes may name torch (mirrors the adapter)
    # lower first: a wrapper's decisive line wins over the engine it wraps (doctor/engines/logs.py ENGINE_LOGS)
    precedence: int = 100
    # fault class -> a fix worded from the numbers the matched line carried (Ollama's scheduler line: the layers it
    # placed, the K/V cache's size, num_gpu asked); None from it: the static fix
    worded: dict[str, Callable[[dict], LogFix | None]] = field(default_factory=dict)

    def fix(self, fault: str, flavour: str = "", numbers: dict | None = None) -> LogFix | None:
        tailor = self.worded.get(fault) if numbers else None
        tailored = tailor(numbers or {}) if tailor is not None else None
        return tailored or self.flavour_fixes.get(flavour, {}).get(fault) or self.fixes.get(fault)


def spelled(template: str | None, **values: object) -> str:
    """A FixVocabulary template filled in; a setting the engine lacks (None) is a mistake in its log module."""
    if template is None:
        raise ValueError("this engine has no such setting (its FixVocabulary says None)")
    return template.format(**values)
