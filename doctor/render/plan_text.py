"""`v100-doctor plan` as text: the answer first, then the whole table, the commands, and where each figure comes from."""

from __future__ import annotations

import textwrap

from doctor.model.quant_plan import QuantPlan
from doctor.render.plan_common import cells, has_draft, headers, ladder_text, sorted_rows, sources, sources_and_notes, step_lines


def render_plan_text(plan: QuantPlan, width: int = 100, verbose: bool = False) -> str:
    out = [f"Plan for {plan.model} ({plan.shape})", f"  {plan.model_source}", ""]
    answered = []
    for a in plan.answers:
        out += textwrap.wrap(f"{a.question}: {a.sentence}", width, initial_indent="* ", subsequent_indent="  ")
        if a.row is not None and a.row not in answered:
            answered.append(a.row)
    for r in answered:
        out += ["", f"  {r.option.label} on {r.engine}, {r.cache} cache, {r.context} tokens on {' + '.join(r.cards)}:"]
        out += step_lines(r)
        if ladder := ladder_text(r):
            out += textwrap.wrap(ladder, width, initial_indent="    ", subsequent_indent="      ")
    head, draft = headers(plan), has_draft(plan)
    rows = [head] + [cells(r, draft) for r in sorted_rows(plan)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    out += ["", f"All options at {plan.context} tokens (tok/s with half of it in the cache; 'at ctx': with all of it; "
                "speeds are estimates):"]
    for row in rows:
        out.append("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
    if verbose:
        for r in sorted_rows(plan):
            out += ["", f"  {r.option.label} / {r.engine} / {r.cache} / {'+'.join(r.cards)}:"]
            out += [f"    {k}: {line}" for k, v in r.commands.items() for line in v.splitlines()]
    out += sources_and_notes(sources(plan), plan.notes, width)
    return "\n".join(out)
