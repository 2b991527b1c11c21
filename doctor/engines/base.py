"""The one interface every engine answers (Harlequin's adapter pattern): a check, the log scanner, the plan and the
verdict ask the engine in force, and never branch on engine names.

An adapter is pure: it reads the gathered Facts and the knowledge tables, never the machine. An engine's machine
reads live in the gatherers (doctor/facts/) and its timed probe in doctor/probe/.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from doctor.model.facts import Facts
from doctor.model.findings import Status
from doctor.model.ids import Engine

__all__ = ["EngineAdapter", "FixVocabulary", "Judgement"]


@dataclass(frozen=True)
class Judgement:
    """An engine's answer to one question about this card or model, ready for a check's Finding."""

    status: Status
    summary: str
    fix: str = ""
    commands: tuple[str, ...] = ()
    evidence: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class FixVocabulary:
    """The words a fix uses for this engine: where its settings live and how each is spelled there. A template's
    `{n}` / `{type}` is filled by the fix that uses it; None: the engine has no such setting."""

    settings_live_in: str  # "llama-server's command line", "the Ollama server's environment and the model's Modelfile"
    context: str  # how the context length is set: "-c {n}", "PARAMETER num_ctx {n}", "max_seq_len: {n}"
    gpu_layers: str | None = None  # how many layers go to the GPU: "-ngl {n}", "PARAMETER num_gpu {n}"
    kv_cache: str | None = None  # a quantized K/V cache: "-ctk {type} -ctv {type} -fa on", "cache_mode: {type}"
    smaller_model: str = "a smaller quant of the model"  # what a user of this engine downloads instead
    restart: str = ""  # what makes a changed setting take effect ("restart the server")


class EngineAdapter:
    """What every engine answers. Subclasses set the class attributes and override what differs."""

    id: Engine
    label: str  # how its users name it: "llama.cpp (llama-server, llama-cpp-python, LM Studio)"
    formats: tuple[str, ...]  # the model formats it loads (doctor/knowledge/formats.py keys)
    uses_torch: bool  # runs on PyTorch: the driver/CUDA/PyTorch pairing and torch's kernels matter
    uses_exllamav2: bool  # runs ExLlamaV2's extension: its JIT build and its import matter
    fp16_kernels: bool  # decode does its math in FP16, so a card with slow FP16 (Pascal 1:64) crawls
    efficiency_key: str  # its row in doctor/knowledge/engine_efficiency.py ("exllamav2", "llama.cpp", "transformers")
    vocabulary: FixVocabulary

    def judge_card(self, cc: str, card_name: str, facts: Facts) -> Judgement:
        """Whether this engine (at today's versions, or the version installed) runs on this card, and how."""
        raise NotImplementedError

    def judge_format(self, fmt: str, cc: str) -> Judgement | None:
        """The engine's word on a model format; None: the generic format check decides."""
        if fmt in self.formats:
            return None
        return Judgement(Status.FAIL, f"{self.label} does not load {fmt} models (it loads {', '.join(self.formats)})")

    def __repr__(self) -> str:
        return f"<engine {self.id}>"
