"""What the text and Markdown plans share: the table's rows as cells, the sources named once."""

from __future__ import annotations

from doctor.model.quant_plan import PlanRow, QuantPlan
from doctor.model.units import GB

HEADERS = ("card", "version", "engine", "cache", "fits", "peak / card GB", "tok/s (range)", "ceiling", "at ctx",
           "max ctx", "streams", "download", "quality")


def where(r: PlanRow) -> str:
    return r.cards[0] if len(r.cards) == 1 else "+".join(r.cards)


def cells(r: PlanRow) -> tuple[str, ...]:
    peak = "/".join(f"{p / GB:.1f}" for p in r.peak_bytes) + " / " + "/".join(f"{c / GB:.1f}" for c in r.capacity_bytes)
    size = f"{r.option.download_bytes / GB:.1f} GB" if r.option.download_bytes else r.option.found
    return (where(r), r.option.label, r.engine, r.cache, "yes" if r.fits else "NO", peak,
            f"{r.speed.mid:g} ({r.speed.low:g}-{r.speed.high:g})", f"{r.ceiling_tok_s:g}",
            f"{r.speed_full.mid:g}", str(r.max_context), str(r.streams) if r.fits else "-", size, r.quality)


def sorted_rows(plan: QuantPlan) -> list[PlanRow]:
    """Per card set, fitting options first, fastest first."""
    order = {cards: i for i, cards in enumerate(dict.fromkeys(r.cards for r in plan.rows))}
    return sorted(plan.rows, key=lambda r: (order[r.cards], not r.fits, -r.speed.mid))


def sources(plan: QuantPlan) -> list[str]:
    return list(dict.fromkeys([r.speed.source for r in plan.rows] + [r.quality_source for r in plan.rows
                                                                      if r.quality_source.startswith("http")]))
