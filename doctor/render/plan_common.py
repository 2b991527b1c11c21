"""What the text and Markdown plans share: the table's rows as cells, the sources named once."""

from __future__ import annotations

import textwrap
from typing import Iterable

from doctor.model.quant_plan import PlanRow, QuantPlan, StreamsEstimate, still_rising
from doctor.model.units import GB

HEADERS = ("card", "version", "engine", "cache", "fits", "peak / card GB", "tok/s (range)", "ceiling", "at ctx",
           "max ctx", "streams", "knee", "download", "quality")
DRAFT_HEADER = "with draft"


def headers(plan: QuantPlan) -> tuple[str, ...]:
    """The table's columns: 'with draft' after the speed when a draft model was planned."""
    return HEADERS[:7] + (DRAFT_HEADER,) + HEADERS[7:] if has_draft(plan) else HEADERS


def has_draft(plan: QuantPlan) -> bool:
    return any(r.speculative is not None for r in plan.rows)


def in_turn(entries: tuple[StreamsEstimate, ...], knee: int) -> bool:
    """Whether the engine runs one stream at a time: the knee at 1 and the total flat to the last rung."""
    return knee == 1 and len(entries) > 1 and entries[-1].total_tok_s.mid <= entries[0].total_tok_s.mid * 1.01


def knee_cell(r: PlanRow) -> str:
    """'8: 167' (streams at the knee: total tok/s there), '1 (in turn)' where the engine runs one stream at a time."""
    e = next((c for c in r.concurrency if c.streams == r.knee), None)
    if e is None:
        return "-"
    if in_turn(r.concurrency, r.knee):
        return "1 (in turn)"
    return f"{e.streams}: {e.total_tok_s.mid:g}" + ("+" if still_rising(r.concurrency) and e is r.concurrency[-1] else "")


def knee_end(entries: tuple[StreamsEstimate, ...], knee: int) -> str:
    """Where the ladder ends, in words: streams in turn, the total still rising, or the knee."""
    if in_turn(entries, knee):
        return "one stream at a time: more streams wait their turn"
    if still_rising(entries) and knee == entries[-1].streams:
        return f"total still rising at {knee} streams, the most estimated"
    return f"knee at {knee} streams: more add little in total and slow each"


def ladder_text(r: PlanRow) -> str:
    """Every stream count's total and per-stream speed, and the knee, in one line."""
    if not r.concurrency:
        return ""
    steps = ", ".join(f"{c.streams} x {c.context_per_stream}: {c.total_tok_s.mid:g} ({c.per_stream_tok_s.mid:g} each)"
                      for c in r.concurrency)
    return f"streams x context: total tok/s: {steps}; {knee_end(r.concurrency, r.knee)} (estimates)"


def where(r: PlanRow) -> str:
    return r.cards[0] if len(r.cards) == 1 else "+".join(r.cards)


def cells(r: PlanRow, draft: bool = False) -> tuple[str, ...]:
    """The row's cells under headers(plan); `draft`: with the 'with draft' column."""
    peak = "/".join(f"{p / GB:.1f}" for p in r.peak_bytes) + " / " + "/".join(f"{c / GB:.1f}" for c in r.capacity_bytes)
    size = f"{r.option.download_bytes / GB:.1f} GB" if r.option.download_bytes else r.option.found
    spec = r.speculative
    with_draft = ((f"{spec.mid:g} ({spec.low:g}-{spec.high:g})" if spec else "-"),) if draft else ()
    return (where(r), r.option.label, r.engine, r.cache, "yes" if r.fits else "NO", peak,
            f"{r.speed.mid:g} ({r.speed.low:g}-{r.speed.high:g})", *with_draft, f"{r.ceiling_tok_s:g}",
            f"{r.speed_full.mid:g}", str(r.max_context), str(r.streams) if r.fits else "-", knee_cell(r), size,
            r.quality)


def sorted_rows(plan: QuantPlan) -> list[PlanRow]:
    """Per card set, fitting options first, fastest first."""
    order = {cards: i for i, cards in enumerate(dict.fromkeys(r.cards for r in plan.rows))}
    return sorted(plan.rows, key=lambda r: (order[r.cards], not r.fits, -r.speed.mid))


def sources(plan: QuantPlan) -> list[str]:
    return list(dict.fromkeys([r.speed.source for r in plan.rows] + [r.quality_source for r in plan.rows
                                                                      if r.quality_source.startswith("http")]
                              + [r.concurrency_source for r in plan.rows if r.concurrency_source]
                              + [r.speculative.source for r in plan.rows if r.speculative][:1]))


def step_lines(r: PlanRow) -> list[str]:
    """A row's commands as printed under it: each step's name, then its lines (a YAML file stays whole)."""
    return [line for kind, cmd in r.commands.items() for line in (f"    {kind}:", *(f"      {c}" for c in cmd.splitlines()))]


def sources_and_notes(named: Iterable[str], notes: Iterable[str], width: int) -> list[str]:
    """The text's last part: where each speed and quality figure comes from, then the notes."""
    out = ["", "Sources of the speed and quality figures:"]
    for s in named:
        out += textwrap.wrap(s, width, initial_indent="  - ", subsequent_indent="    ")
    for n in notes:
        out += textwrap.wrap(n, width, initial_indent="note: ", subsequent_indent="      ")
    return out
