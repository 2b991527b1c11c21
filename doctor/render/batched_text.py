"""Batched decode, drawn for the text, Markdown and TUI faces: the report's model at 1, 2, 4, 8 ... streams (an
estimate), where adding a stream stops adding total speed, and the engine's own settings for serving that many.

It draws Report.batched_decode (made by doctor/verdict/batched.py); nothing is computed here.
"""

from __future__ import annotations

from typing import Any

from doctor.model.batched import NO_MODEL, BatchedDecode
from doctor.model.quant_plan import StreamsEstimate
from doctor.model.range import Range
from doctor.model.unknown import Unknown
from doctor.render.common import WIDTH, wrap
from doctor.render.plan_common import knee_end
from doctor.render.untrusted import md_text

HEADING = "Batched decode, estimated"


def shown(report: Any) -> BatchedDecode | Unknown | None:
    """What the report has to say of batched decode; None where it has nothing (no model was named)."""
    b = getattr(report, "batched_decode", None)
    if b is None or (isinstance(b, Unknown) and b.reason == NO_MODEL):
        return None
    return b


def heading(b: BatchedDecode | Unknown) -> str:
    if isinstance(b, Unknown):
        return f"{HEADING}: unknown ({b.reason})"
    where = b.cards[0] if len(b.cards) == 1 else (f"{len(b.cards)} x {b.cards[0]}" if len(set(b.cards)) == 1 else
                                                  " + ".join(b.cards)) + " (split)"
    basis = f"; {b.basis}" if b.basis else ""
    return f"{HEADING} ({b.option} on {where}, {b.engine}, {b.cache} cache, {b.context} tokens per stream{basis}):"


def spread(r: Range) -> str:
    """' (22.9-32.9)': a figure's range; nothing for a figure without one."""
    return f" ({r.low:g}-{r.high:g})" if (r.low, r.high) != (r.mid, r.mid) else ""


def rung(e: StreamsEstimate) -> str:
    t, p = e.total_tok_s, e.per_stream_tok_s
    if e.streams == 1:
        return f"1 stream x {e.context_per_stream} tokens: {t.mid:g} tok/s{spread(t)}"
    return (f"{e.streams} streams x {e.context_per_stream} tokens: {t.mid:g} tok/s in total{spread(t)}, "
            f"{p.mid:g} each{spread(p)}")


def knee_line(b: BatchedDecode) -> str:
    return f"knee: {knee_end(b.entries, b.knee)}" + (f" ({b.attention})" if b.attention else "")


def text_lines(report: Any, verbose: bool = False, width: int = WIDTH) -> list[str]:
    """The plain text's section ([] when there is nothing to say)."""
    b = shown(report)
    if b is None:
        return []
    lines = wrap(heading(b), "", "  ", width)
    if isinstance(b, Unknown):
        return lines
    for e in b.entries:
        lines += wrap(rung(e), "  ", "      ", width)
    lines += wrap(knee_line(b), "  ", "    ", width)
    for s in b.serve:
        lines += wrap(f"serve: {s}", "  ", "    ", width)
    if verbose:
        lines += wrap(f"how: {b.source}", "  ", "    ", width)
        lines += [w for a in b.assumed for w in wrap(f"assumed: {a}", "  ", "    ", width)]
    return lines


def markdown_lines(report: Any) -> list[str]:
    """The Markdown section: the ladder as a table, the knee and the serving settings below it."""
    b = shown(report)
    if b is None:
        return []
    if isinstance(b, Unknown):
        return [f"**{HEADING}:** unknown ({md_text(b.reason)})"]
    out = [f"**{md_text(heading(b)[:-1])}**", "", "| streams | context each | total tok/s | each tok/s |",
           "|---|---|---|---|"]
    out += [f"| {e.streams} | {e.context_per_stream} | {e.total_tok_s.mid:g}{spread(e.total_tok_s)} | "
            f"{e.per_stream_tok_s.mid:g}{spread(e.per_stream_tok_s)} |" for e in b.entries]
    out += ["", f"- {md_text(knee_line(b))}", *(f"- serve: {md_text(s)}" for s in b.serve),
            f"- how: {md_text(b.source)}", *(f"- assumed: {md_text(a)}" for a in b.assumed)]
    return out


def one_line(report: Any) -> str:
    """The TUI's line under the verdict, the ladder first so that 80 columns show it: "Streams (estimate), tok/s in
    total/each: 1: 62.1 · 2: 106.3/53.1 ...; knee: ...", then the model and engine ("" for none)."""
    b = shown(report)
    if b is None:
        return ""
    if isinstance(b, Unknown):
        return f"{HEADING}: unknown ({b.reason})"
    rungs = " · ".join(f"{e.streams}: {e.total_tok_s.mid:g}" + (f"/{e.per_stream_tok_s.mid:g}" if e.streams > 1 else "")
                       for e in b.entries)
    return f"Streams (estimate), tok/s in total/each: {rungs}; {knee_line(b)}; {b.option}, {b.engine}"
