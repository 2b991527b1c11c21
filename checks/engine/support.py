"""`engine`: does the plan's engine (at today's versions) run on this card, on which kernel path, and what would the
other engines give here (the engine gap, estimated from the ceiling x each engine's published efficiency)."""

from __future__ import annotations

from checks.base import Check, CheckContext
from checks.model.card import card_for
from doctor.engines import adapter
from doctor.knowledge.engine_efficiency import expected_share, family
from doctor.model.findings import Finding, Status
from doctor.model.ids import CheckId, Engine


def engine_gap(ctx: CheckContext, cc: str) -> tuple[str, dict]:
    """Other engines' expected decode on this card: the ceiling x their efficiency there, each with its source."""
    ceiling = ctx.prior.get(CheckId.CEILING)
    top = ceiling.evidence.get("ceiling_tok_s_empty_cache") if ceiling is not None else None
    if not isinstance(top, (int, float)):
        return "", {}
    card = card_for(ctx)
    fam = family(cc, bool(card and card.spec and card.spec.fp16_slow))
    shares = {name: expected_share(name, fam) for name in ("exllamav2", "llama.cpp", "transformers")}
    est = {name: round(top * share, 1) for name, (share, _, _) in shares.items()}
    text = "; ".join(f"{name} about {v:g} tok/s ({shares[name][0]:.0%} of it, {shares[name][1]})"
                     for name, v in sorted(est.items(), key=lambda kv: -kv[1]))
    mine = est.get(ctx.adapter.efficiency_key)
    best = max(est.values())
    gap = f" This engine is the slowest choice here by x{best / mine:.1f}." if mine and best / mine >= 1.5 else ""
    return (f" Other engines here, estimated from the {top:g} tok/s ceiling at the same bytes per token: {text}.{gap}",
            {"engine_estimates_tok_s": est, "estimate_sources": {n: v[2] for n, v in shares.items()},
             "estimate_basis": "ceiling (empty cache) x the engine's published or measured share on this architecture"})


def run(ctx: CheckContext) -> Finding:
    force = ctx.engine
    engine = force.engine
    card = ctx.card()
    if card is None:
        return CHECK.finding(Status.SKIP, f"skipped: the card's compute capability is unknown (engine {engine}, {force.why})")
    cc, name, _planned = card
    if force.assumed:
        return likely_engines(ctx, cc, name)
    judged = ctx.adapter.judge_card(cc, name, ctx.facts)
    ev: dict = {"engine": str(engine), "chosen_because": force.why, "cc": cc, **judged.evidence}
    summary = judged.summary
    gap_text, gap_ev = engine_gap(ctx, cc)
    ev.update(gap_ev)
    if gap_text and not summary.endswith("."):
        summary += "."
    return CHECK.finding(judged.status, summary + gap_text, ev, judged.fix, judged.commands)


# the engines an owner of an old card is likely to run, asked in this order when none is named or found
LIKELY = (Engine.LLAMA_CPP, Engine.OLLAMA, Engine.EXLLAMAV2, Engine.VLLM, Engine.TABBYAPI)


def likely_engines(ctx: CheckContext, cc: str, name: str) -> Finding:
    """No engine named or found: what each likely engine would do on this card, instead of judging one."""
    judged = {e: adapter(e).judge_card(cc, name, ctx.facts) for e in LIKELY}
    text = "; ".join(j.summary.rstrip(".") for j in judged.values())
    ev = {"engine": None, "chosen_because": ctx.engine.why, "cc": cc,
          "likely_engines": {str(e): j.status.value for e, j in judged.items()}}
    return CHECK.finding(Status.INFO, f"no engine named or found, so none is judged (give --engine, or --model with its "
                         f"format); on {name} (cc {cc}): {text}", ev)


CHECK = Check(id=CheckId("engine"), title="The plan's engine on this card", run=run, depends_on=(CheckId.COMPUTE_CAPABILITY,),
              blocked_by=(Status.ERROR,), order=10)
