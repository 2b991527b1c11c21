"""Batched decode, drawn for the text, Markdown and TUI faces: the report's model at 1, 2, 4, 8 ... streams (an
estimate), where adding a stream stops adding total speed, and the engine's own settings for serving that many.

It draws Report.batched_decode (made by doctor/verdict/batched.py); nothing is computed here.
"""

from __future__ import annotations

from typing import Any

from doctor.model.batched import NO_MODEL, BatchedDecode
from doctor.model.quant_plan import StreamsEstimate
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
    where = " + ".join(b.cards) + (" (split)" if len(b.cards) > 1 else "")
    return f"{HEADING} ({b.option} on {where}, {b.engine}, {b.cache} cache, {b.context} tokens per stream):"


def rung(e: StreamsEstimate) -> str:
    t, p = e.total_tok_s, e.per_stream_tok_s
    if e.streams == 1:
        return f"1 stream x {e.context_per_stream} tokens: {t.mid:g} tok/s ({t.low:g}-{t.high:g})"
    return (f"{e.streams} streams x {e.context_per_stream} tokens: {t.mid:g} tok/s in total ({t.low:g}-{t.high:g}), "
            f"{p.mid:g} each ({p.low:g}-{p.high:g})")


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
    out += [f"| {e.streams} | {e.context_per_stream} | {e.total_tok_s.mid:g} ({e.total_tok_s.low:g}-{e.total_tok_s.high:g}) "
            f"| {e.per_stream_tok_s.mid:g} ({e.per_stream_tok_s.low:g}-{e.per_stream_tok_s.high:g}) |" for e in b.entries]
    out += ["", f"- {md_text(knee_line(b))}", *(f"- serve: {md_text(s)}" for s in b.serve),
            f"- how: {md_text(b.source)}", *(f"- assumed: {md_text(a)}" for a in b.assumed)]
    return out


def one_line(report: Any) -> str:
    """The TUI's line beside the verdict: every rung's total and per-stream speed, and the knee ("" for none)."""
    b = shown(report)
    if b is None:
        return ""
    if isinstance(b, Unknown):
        return f"{HEADING}: unknown ({b.reason})"
    rungs = " · ".join(f"{e.streams}: {e.total_tok_s.mid:g}" + (f" ({e.per_stream_tok_s.mid:g} each)" if e.streams > 1 else "")
                       for e in b.entries)
    return f"{HEADING}, tok/s in total by streams ({b.option}, {b.engine}): {rungs}; {knee_line(b)}"
