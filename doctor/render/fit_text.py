"""`v100-doctor fit` as text and Markdown: per card set, the ranked models with plan's columns, the first one's
commands, the score in words, the sources."""

from __future__ import annotations

import textwrap

from doctor.model.fit import FitChoice, FitResult
from doctor.render.plan_common import HEADERS, cells, sources_and_notes, step_lines, where
from doctor.render.untrusted import md_code, md_text

FIT_HEADERS = ("#", "model", "params B", "licence") + HEADERS


def _params(c: FitChoice) -> str:
    total = f"{c.model.params / 1e9:.1f}" if c.model.params else "?"
    return f"{total} ({c.model.active_params / 1e9:.1f} active)" if c.model.active_params else total


def fit_cells(c: FitChoice) -> tuple[str, ...]:
    return (str(c.rank), c.model.repo, _params(c), c.model.licence) + cells(c.row)


def groups(result: FitResult) -> list[tuple[str, list[FitChoice]]]:
    """The choices per card set, in the order planned."""
    out: dict[str, list[FitChoice]] = {}
    for c in result.choices:
        out.setdefault(where(c.row), []).append(c)
    return list(out.items())


def _sources(result: FitResult) -> list[str]:
    return list(dict.fromkeys([c.row.speed.source for c in result.choices] + [
        c.row.quality_source for c in result.choices if c.row.quality_source.startswith("http")]))


def _heading(result: FitResult) -> list[str]:
    counts = result.considered
    return [f"Models that fit {' + '.join(result.cards)} at {result.context} tokens (cards: {result.cards_from})",
            f"score: {result.score}",
            f"{counts.get('models', 0)} catalogued models after the filters; {counts.get('options_planned', 0)} options "
            f"planned, {counts.get('options_fitting', 0)} fit above the floor (min {result.min_bpw:g} bpw"
            + (f", {result.min_tok_s:g} tok/s" if result.min_tok_s else "") + ")",
            f"from the {result.catalogue}"]


def render_fit_text(result: FitResult, width: int = 100, verbose: bool = False) -> str:
    out: list[str] = []
    for line in _heading(result):
        out += textwrap.wrap(line, width, subsequent_indent="  ")
    asked = {k: v for k, v in result.filters.items() if v not in (None, [], ())}
    if asked:
        out.append("filters: " + ", ".join(f"{k}={v}" for k, v in asked.items()))
    for card, choices in groups(result):
        rows = [FIT_HEADERS] + [fit_cells(c) for c in choices]
        widths = [max(len(r[i]) for r in rows) for i in range(len(FIT_HEADERS))]
        first = choices[0]
        out += ["", f"On {card}: {first.model.repo}, {first.row.option.label} with the {first.row.cache} cache on "
                    f"{first.row.engine}, {first.row.speed.mid:g} tok/s expected ({first.row.speed.low:g}-"
                    f"{first.row.speed.high:g}), peak {max(first.row.peak_bytes) / 1e9:.1f} GB, fits up to "
                    f"{first.row.max_context} tokens"]
        out += ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
        for c in choices if verbose else choices[:1]:
            out += ["", f"  #{c.rank} {c.model.repo}, {c.row.option.label}, {c.row.cache} cache on {card}:"]
            out += step_lines(c.row)
    if not result.choices:
        out += ["", "Nothing in the catalogue fits: a shorter --context, a lower --min-bpw, other filters or cards."]
    out += sources_and_notes(_sources(result), result.notes, width)
    return "\n".join(out)


def render_fit_markdown(result: FitResult) -> str:
    head = _heading(result)
    out = [f"## {md_text(head[0])}", ""] + [f"- {md_text(line)}" for line in head[1:]]
    for card, choices in groups(result):
        first = choices[0]
        out += ["", f"### On {md_code(card)}", "", "| " + " | ".join(FIT_HEADERS) + " |", "|" + "---|" * len(FIT_HEADERS)]
        out += ["| " + " | ".join(md_text(x) for x in fit_cells(c)) + " |" for c in choices]
        out += ["", f"{md_code(first.model.repo)}, {md_text(first.row.option.label)}, {first.row.cache} cache:", ""]
        for kind, cmd in first.row.commands.items():
            lang = "yaml" if kind == "config" else "sh"
            out += [f"{kind}:", "", f"```{lang}", *cmd.splitlines(), "```", ""]
    out += ["", "Sources:"] + [f"- {md_text(s)}" for s in _sources(result)]
    out += [""] + [f"> {md_text(n)}" for n in result.notes]
    return "\n".join(out)
