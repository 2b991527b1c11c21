"""The report's answer to "how fast would 2, 4, 8 users see this model on this card": batched decode, estimated.

doctor/verdict/batched.py makes it from the report's facts (the model read from --model, the card(s) in force, the
engine in force, its cache and context) with the plan's physics (doctor/plan/concurrency.py); the renderers draw it.
Report.batched_decode holds it, or Unknown(reason) where the model or the card is not known.
"""

from __future__ import annotations

from dataclasses import dataclass

from doctor.model.quant_plan import StreamsEstimate
from doctor.model.range import Range

NO_MODEL = "no model named (give --model DIR or FILE): the estimate is for a model on this card"


@dataclass(frozen=True)
class BatchedDecode:
    """Total and per-stream decode speed at 1, 2, 4, 8 ... concurrent streams: estimates, not measurements."""

    engine: str  # whose batching: exllamav2 | llama.cpp | ollama (the plan's engine for the engine in force)
    option: str  # the model's version as the plan names it: "EXL2 3.75 bpw", "GGUF Q4_K_M"
    cards: tuple[str, ...]  # knowledge-base keys of the card(s) in force; more than one: a split
    cache: str  # the engine's cache type
    context: int  # each stream's context while the cache holds them whole
    batches: bool  # the engine runs several streams in one step here (False: they take turns)
    attention: str  # what decides it for ExLlamaV2: flash-attn as the facts show it ("": llama.cpp's slots batch)
    entries: tuple[StreamsEstimate, ...]  # 1, 2, 4, 8 ... streams, up to what the cache holds
    knee: int  # the fewest streams within 10% of the highest total (doctor/model/quant_plan.py knee)
    source: str  # how the figures are made and what the engine batches, with sources
    basis: str = ""  # what one stream's speed is: the plan's estimate mid-conversation, or the probe's measurement
    serve: tuple[str, ...] = ()  # the engine's own settings for N streams, at the knee (text, not a fix to run)
    assumed: tuple[str, ...] = ()  # what was taken as given: a default context, the idle card's memory

    @property
    def single(self) -> Range:
        """One stream's speed (the ladder's first rung)."""
        return self.entries[0].total_tok_s
