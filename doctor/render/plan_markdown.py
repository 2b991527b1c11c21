"""`v100-doctor plan --markdown`: the answer, the table and the sources, for an issue or a README."""

from __future__ import annotations

from doctor.model.quant_plan import QuantPlan, step_language
from doctor.render.plan_common import cells, has_draft, headers, ladder_text, sorted_rows, sources
from doctor.render.untrusted import md_code, md_text


def _cell(text: str) -> str:
    return md_text(text)


def render_plan_markdown(plan: QuantPlan) -> str:
    out = [f"## Plan for {md_code(plan.model)}", "", f"{md_text(plan.shape)}; {md_text(plan.model_source)}.", ""]
    answered = []
    for a in plan.answers:
        out.append(f"- **{a.question}**: {a.sentence}")
        if a.row is not None and a.row not in answered:
            answered.append(a.row)
    for r in answered:
        out += ["", f"{r.option.label} on {r.engine}, {r.cache} cache, {r.context} tokens on {' + '.join(r.cards)}:"]
        for step, text in r.commands.items():  # one block per step: a shell line or a YAML file, never both
            out += ["", f"{step}:", "", f"```{step_language(step)}", *text.splitlines(), "```"]
        if ladder := ladder_text(r):
            out += ["", md_text(ladder)]
    out += ["", f"All options at {plan.context} tokens (tok/s with half of it in the cache; *at ctx* with all of it; "
                "estimates):", "", "| " + " | ".join(headers(plan)) + " |", "|" + "---|" * len(headers(plan))]
    out += ["| " + " | ".join(_cell(c) for c in cells(r, has_draft(plan))) + " |" for r in sorted_rows(plan)]
    out += ["", "Sources:"] + [f"- {s}" for s in sources(plan)]
    out += [""] + [f"> {n}" for n in plan.notes]
    return "\n".join(out)
