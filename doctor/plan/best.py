"""`v100-doctor fit`: every catalogued model x quantized version x engine x cache on the cards, at the asked context,
ranked: which model to run on this card.

The score, in order: a quality floor first (the option fits the context whole on the card or cards, at or above
--min-bpw bits per weight, and --min-tok-s when given), then speed: each model's best option is chosen by plan's own
rule (the fastest; within 5% of it, the higher bpw, then the less quantized cache) and models are ranked by that
option's expected tok/s with half the context in the cache. Rows are plan's rows (doctor/plan/rows.py): the sweep
takes a first look at every option (fits, peak, speed; no longest-context search), then plans the shown ones whole,
with their streams, so a row here is the row `plan MODEL` prints for that option.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable

from doctor.engines import EngineAdapter
from doctor.knowledge.arithmetic.model_bytes import ArithmeticUnavailable, ModelDims, dims
from doctor.knowledge.arithmetic.model_shape import ParameterCount, parameter_count
from doctor.knowledge.gpus import GpuSpec
from doctor.model.catalogue import CatalogueEntry
from doctor.model.fit import FitChoice, FitModel, FitResult
from doctor.model.model_dir import ModelConfig
from doctor.model.quant_plan import PlanRow, QuantCandidate
from doctor.plan.build import CACHE_RANK, SAME_SPEED, _runs, base_candidates, card_sets, standard_candidates
from doctor.plan.concurrency import with_concurrency
from doctor.plan.rows import Setting, caches, engines_for, row

SCORE = ("quality floor first: an option counts only if it fits the context whole on the card(s), the model trained "
         "for that context, at or above the "
         "bits-per-weight floor (and the speed floor when one is given); then speed: each model's best option (the "
         "fastest; within 5% of it the higher bpw, then the less quantized cache: plan's rule) ranked by its expected "
         "tok/s with half the context in the cache")
LOWER_BOUND_SHARE = 0.8  # weights at least this share of parameters x bpw / 8 (a GGUF mix keeps some tensors smaller)
# A model whose speed bound (the card's bandwidth over the bytes a token must read: its parameters less the embedding
# table, at its smallest version's bpw) times this margin is below the slowest of the `limit` models already ranked
# cannot enter the ranking: not planned. Over the whole catalogue on every card in doctor/knowledge/gpus.py, every
# cache, 256 tokens, the plan's expected speed of a fitting option reached at most 1.004 of that bound (measured
# 2026-12-04); tests/doctor/plan/test_best.py checks that the ranking with it equals the one without.
BOUND_MARGIN = 1.25
_CHAT = ("instruct", "-it", "chat", "-r1", "thinking", "distill")


@dataclass(frozen=True)
class Filters:
    """What the user narrowed the catalogue to (None / empty: no filter)."""

    min_params: float | None = None  # billions of total parameters
    max_params: float | None = None
    families: tuple[str, ...] = ()  # any of these, in the family name or the Hub id (any case)
    licences: tuple[str, ...] = ()  # any of these Hub licence tags ("unknown" for none given)
    uses: tuple[str, ...] = ()  # all of these (chat, code, moe, dense)
    engine: str | None = None  # an engine id with rows in a plan (doctor.plan.rows.planned_engines)

    def asked(self) -> dict[str, object]:
        return {"min_params_b": self.min_params, "max_params_b": self.max_params, "family": list(self.families),
                "licence": list(self.licences), "use": list(self.uses), "engine": self.engine}


@dataclass(frozen=True)
class CatalogueReader:
    """What the sweep reads of the catalogue, handed down by the command (the catalogue's file is the facts layer's):
    a model's config, its quantized versions, its licence tag."""

    config: Callable[[CatalogueEntry], ModelConfig]
    candidates: Callable[[CatalogueEntry], tuple[QuantCandidate, ...]]
    licence: Callable[[str], str]


@dataclass
class _Model:
    """One catalogued model, parsed once for every card set."""

    entry: CatalogueEntry
    info: FitModel
    config: ModelConfig
    dims: ModelDims
    candidates: tuple[tuple[QuantCandidate, EngineAdapter], ...]  # (version, engine), as plan pairs them
    read_params: int  # what a token must read at least: the active parameters less the embedding table
    best: dict[tuple[str, ...], tuple[PlanRow, int]] = field(default_factory=dict)  # card set -> first look, options


def uses_of(entry: CatalogueEntry, repos: frozenset[str], moe: bool) -> tuple[str, ...]:
    """chat: instruction-tuned (its name says so, or it has no separate instruct version and is not a -Base);
    code: a coder model; moe or dense: its shape."""
    name = entry.repo.lower()
    base = name.endswith("-base") or any(f"{name}{s}" in repos for s in ("-instruct", "-it", "-chat"))
    out = []
    if any(k in name for k in _CHAT) or not base:
        out.append("chat")
    if "coder" in name or "code" in name.split("/")[-1]:
        out.append("code")
    out.append("moe" if moe else "dense")
    return tuple(out)


def _models(entries: tuple[CatalogueEntry, ...], filters: Filters,
            read: CatalogueReader) -> tuple[list[_Model], list[str]]:
    """The catalogued models the filters keep, parsed; and what could not be planned, with why."""
    repos = frozenset(e.repo.lower() for e in entries)
    kept, skipped = [], []
    for e in entries:
        parsed = _parsed(e, read.config)
        if isinstance(parsed, str):
            skipped.append(f"{e.repo}: {parsed}")
            continue
        config, d, counted = parsed
        params = e.params or counted.total
        info = FitModel(e.repo, e.family, params, counted.active if d.is_moe else None, uses_of(e, repos, d.is_moe),
                        read.licence(e.repo))
        if not _passes(info, filters):
            continue
        found = read.candidates(e)
        options = tuple((c, eng) for c in (found or standard_candidates()) + base_candidates(e.repo, found)
                        for eng in engines_for(c) if filters.engine is None or str(eng.id) == filters.engine)
        kept.append(_Model(e, info, config, d, options, counted.active - counted.embedding))
    return kept, skipped


@lru_cache(maxsize=1024)  # a model's shape is the same for every card and every ranking in one process
def _parsed(e: CatalogueEntry, config_of: Callable[[CatalogueEntry], ModelConfig]
            ) -> tuple[ModelConfig, ModelDims, ParameterCount] | str:
    """The entry's config, shape and parameter counts; or why it cannot be planned."""
    try:
        config = config_of(e)
        d = dims(config)
        return config, d, parameter_count(d)
    except (ArithmeticUnavailable, ValueError) as exc:
        return str(exc)


def _passes(m: FitModel, f: Filters) -> bool:
    billions = (m.params or 0) / 1e9
    if f.min_params is not None and billions < f.min_params or f.max_params is not None and billions > f.max_params:
        return False
    if f.families and not any(x.lower() in m.family.lower() or x.lower() in m.repo.lower() for x in f.families):
        return False
    if f.licences and m.licence.lower() not in {x.lower() for x in f.licences}:
        return False
    return all(u in m.uses for u in f.uses)


def _better(a: PlanRow, b: PlanRow) -> PlanRow:
    """Plan's rule between two fitting options: the faster unless within SAME_SPEED, then the higher bpw, then the
    less quantized cache."""
    top = max(a.speed.mid, b.speed.mid)
    near = [r for r in (a, b) if r.speed.mid >= top * (1 - SAME_SPEED)]
    return max(near, key=lambda r: (r.bpw or 16, -CACHE_RANK.get(r.cache, 9), r.speed.mid))


def _bound(m: _Model, group: tuple[GpuSpec, ...], min_bpw: float) -> float:
    """An upper bound of the model's expected tok/s on the card set (BOUND_MARGIN aside); 0 with no option."""
    bits = [c.bpw or 16.0 for c, _ in m.candidates if (c.bpw or 16.0) >= min_bpw]
    if not bits or m.read_params <= 0:
        return 0.0 if not bits else float("inf")
    return max(c.bandwidth_gbs for c in group) * 1e9 / (m.read_params * min(bits) / 8)


def sweep(models: list[_Model], cards: tuple[GpuSpec, ...], context: int, min_bpw: float,
          min_tok_s: float | None, limit: int | None = None) -> dict[str, int]:
    """A first look at the options on every card set; each model keeps its best fitting one per card set.
    Options whose weights alone cannot fit (a lower bound) are not planned, nor models trained for a shorter context
    (max_position_embeddings); with `limit`, nor are the models whose speed bound cannot reach the `limit` fastest
    already found. Returns the counts looked at."""
    looked = fitting = skipped = short = 0
    for g in card_sets(cards):
        capacity = sum(Setting(models[0].config, models[0].dims, g).capacity_bytes(c) for c in g) if models else 0
        bounds = {id(m): _bound(m, g, min_bpw) for m in models}
        fastest: list[float] = []  # the `limit` best speeds so far (a heap: the slowest of them first)
        for i, m in enumerate(sorted(models, key=lambda m: -bounds[id(m)])):
            if limit and len(fastest) >= limit and bounds[id(m)] * BOUND_MARGIN < fastest[0]:
                skipped += len(models) - i  # (the rest have lower bounds still)
                break
            setting = Setting(m.config, m.dims, g, base_repo=m.entry.repo)
            if setting.upper_context < context:  # trained for less: not this context without RoPE scaling
                short += 1
                continue
            for c, eng in m.candidates:
                bpw = c.bpw or 16.0
                if bpw < min_bpw or (m.info.params or 0) * bpw / 8 * LOWER_BOUND_SHARE > capacity:
                    continue
                if not _runs(eng, g, c, []):  # (an engine that does not run the version on these cards: no rows)
                    continue
                for cache in caches(str(eng.id)):
                    looked += 1
                    r = row(setting, c, g, cache, context, str(eng.id), longest=False)
                    if not r.fits or (min_tok_s is not None and r.speed.mid < min_tok_s):
                        continue
                    fitting += 1
                    held = m.best.get(r.cards)
                    m.best[r.cards] = (r, 1) if held is None else (_better(held[0], r), held[1] + 1)
            best = m.best.get(tuple(c.key for c in g))
            if best is not None and limit:
                (heapq.heappush if len(fastest) < limit else heapq.heappushpop)(fastest, best[0].speed.mid)
    return {"models": len(models), "options_planned": looked, "options_fitting": fitting,
            "models_not_planned_by_bound": skipped, "models_trained_for_less_context": short}


def best_fit(entries: tuple[CatalogueEntry, ...], cards: tuple[GpuSpec, ...], cards_from: str, context: int,
             min_bpw: float, min_tok_s: float | None, filters: Filters, limit: int | None, catalogue: str,
             read: CatalogueReader) -> FitResult:
    """The ranking; the first `limit` models of each card set planned whole (None: all of them)."""
    models, skipped = _models(entries, filters, read)
    counts = sweep(models, cards, context, min_bpw, min_tok_s, limit)
    choices: list[FitChoice] = []
    for g in card_sets(cards):
        key = tuple(c.key for c in g)
        ranked = sorted(((m, *m.best[key]) for m in models if key in m.best),
                        key=lambda t: (-t[1].speed.mid, -(t[0].info.params or 0), t[0].info.repo))
        for rank, (m, quick, n) in enumerate(ranked[:limit] if limit else ranked, 1):
            s = Setting(m.config, m.dims, g, base_repo=m.entry.repo)
            whole = row(s, quick.option, g, quick.cache, context, quick.engine)
            if (e := next(e for c, e in m.candidates if c == quick.option and str(e.id) == quick.engine)).plan \
                    and e.plan.batched:
                whole = with_concurrency(s, whole)
            choices.append(FitChoice(rank, m.info, whole, whole.speed.mid, n))
    notes = []
    if skipped:
        notes.append(f"{len(skipped)} catalogued models could not be planned: " + "; ".join(skipped))
    if not any(c.model.repo for c in choices):
        notes.append("no catalogued option fits: a shorter --context, a lower --min-bpw, or another card")
    return FitResult(tuple(c.key for c in cards), cards_from, context, min_bpw, min_tok_s, filters.asked(), SCORE,
                     tuple(choices), counts, catalogue, tuple(notes))
