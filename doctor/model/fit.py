"""What `v100-doctor fit` answers, as data: the catalogued models that fit the cards at the asked context, ranked,
each with its best option as a plan row (the same columns and commands as `plan`). Built by doctor/plan/best.py,
drawn by doctor/render/fit_text.py and doctor/tui/fit_screen.py; the wire form is schema v100-doctor/fit/1
(doctor/schema/fit-1.json)."""

from __future__ import annotations

from dataclasses import dataclass

from doctor.model.quant_plan import PlanRow, row_to_dict
from doctor.model.serialize import strict_json

FIT_SCHEMA = "v100-doctor/fit/1"
USES = ("chat", "code", "moe", "dense")


@dataclass(frozen=True)
class FitModel:
    """A catalogued model as the ranking sees it."""

    repo: str
    family: str
    params: int | None  # total parameters (the catalogue's figure, else counted from its config)
    active_params: int | None  # a MoE: the parameters one token reads; None: dense
    uses: tuple[str, ...]  # of USES
    licence: str  # the Hub's licence tag, or "unknown"


@dataclass(frozen=True)
class FitChoice:
    """One model's best option on one card set, and its place in the ranking."""

    rank: int
    model: FitModel
    row: PlanRow
    score: float  # the ranking's key: the option's expected tok/s (mid, half the context in the cache)
    options: int  # how many of its options (version x engine x cache) fit above the quality floor


@dataclass(frozen=True)
class FitResult:
    cards: tuple[str, ...]  # the card keys planned for
    cards_from: str  # "detected" | "--target-gpu" | a sentence: why the default card
    context: int
    min_bpw: float
    min_tok_s: float | None
    filters: dict[str, object]  # size, family, licence, use, engine as asked
    score: str  # the ranking rule, in words
    choices: tuple[FitChoice, ...]  # ranked, per card set (each card alone, then all of them split)
    considered: dict[str, int]  # models and options looked at, options that fit
    catalogue: str  # the catalogue's version and sources
    notes: tuple[str, ...] = ()
    schema: str = FIT_SCHEMA


def fit_to_dict(result: FitResult) -> dict:
    return {"schema": result.schema, "cards": list(result.cards), "cards_from": result.cards_from,
            "context": result.context, "min_bpw": result.min_bpw, "min_tok_s": result.min_tok_s,
            "filters": dict(result.filters), "score": result.score,
            "results": [{"rank": c.rank, "model": {"repo": c.model.repo, "family": c.model.family,
                                                   "params": c.model.params, "active_params": c.model.active_params,
                                                   "uses": list(c.model.uses), "licence": c.model.licence},
                         "score": c.score, "options": c.options, "row": row_to_dict(c.row)} for c in result.choices],
            "considered": dict(result.considered), "catalogue": result.catalogue, "notes": list(result.notes)}


def fit_to_json(result: FitResult) -> str:
    return strict_json(fit_to_dict(result), indent=2, ensure_ascii=False)
