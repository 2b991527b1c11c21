"""The verdict of an engine's own probe (llama.cpp, Transformers, an engine server): what Report.engine_verdict holds
and the renderers draw. Computed in doctor/verdict/llamacpp.py, transformers.py and engine_gap.py; a replay computes
it again from the recorded probe (doctor/run/probe_stage.py), as it does the ExLlamaV2 verdict (doctor/model/verdict.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class OtherEngine:
    engine: str
    tok_s: float
    basis: str  # "measured" | "estimated" | "estimated upper bound" (the user's engine decoded launch-bound)
    how: str  # the format and model it was measured on, or the share and ceiling it was estimated from
    source: str


@dataclass(frozen=True)
class EngineGap:
    engine: str  # the user's
    tok_s: float  # the user's, measured
    others: tuple[OtherEngine, ...] = field(default_factory=tuple)  # fastest first
    summary: str = ""

    @property
    def fastest(self) -> OtherEngine | None:
        return self.others[0] if self.others else None

    @property
    def gap(self) -> float:
        """The fastest other engine over the user's (1.0: none faster)."""
        best = self.fastest
        return max(best.tok_s / self.tok_s, 1.0) if best is not None and self.tok_s > 0 else 1.0


@dataclass(frozen=True)
class EngineVerdict:
    """Measured against the ceiling for the bytes this engine reads per token, the engine's own cost (its share of
    the ceiling against what it reaches elsewhere on this architecture), the causes for this engine, and the others."""

    outcome: str  # the probe's: ok | died-silently | error | timeout | not-installed | not-run
    summary: str
    ceiling_tok_s: float | None = None
    measured_tok_s: float | None = None
    efficiency: float | None = None  # measured / ceiling
    expected_efficiency: float | None = None  # the engine's published or measured share on this architecture
    expected_source: str = ""
    causes: tuple[dict, ...] = field(default_factory=tuple)  # {"cause", "text", "source"}
    engine_gap: EngineGap | None = None  # the other engines here: measured (--compare-engines) or estimated
    engine: str = ""  # llama.cpp | transformers | ollama | vllm
    spread_pct: float | None = None  # between the kept runs
    unsettled: str = ""  # the runs spread more than the flag line even after more runs: how far, and what was done
