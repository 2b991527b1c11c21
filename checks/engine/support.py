"""`engine`: does the plan's engine (at today's versions) run on this card, on which kernel path, and what would the
other engines give here (the engine gap, estimated from the ceiling x each engine's published efficiency)."""

from __future__ import annotations

from checks.base import Check, CheckContext
from checks.engine.choice import plan_engine
from checks.model.card import card_for
from doctor.knowledge.engine_efficiency import expected_share, family
from doctor.knowledge.engines import TRANSFORMERS_BNB_NF4, EngineSupport, engine_support, llama_cpp_path, supports
from doctor.model.findings import Finding, Status
from doctor.model.ids import CheckId, Engine


def engine_gap(ctx: CheckContext, engine: Engine, cc: str) -> tuple[str, dict]:
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
    mine = est.get(str(engine) if engine != Engine.OLLAMA else "llama.cpp")
    best = max(est.values())
    gap = f" This engine is the slowest choice here by x{best / mine:.1f}." if mine and best / mine >= 1.5 else ""
    return (f" Other engines here, estimated from the {top:g} tok/s ceiling at the same bytes per token: {text}.{gap}",
            {"engine_estimates_tok_s": est, "estimate_sources": {n: v[2] for n, v in shares.items()},
             "estimate_basis": "ceiling (empty cache) x the engine's published or measured share on this architecture"})


def _judge(row: EngineSupport, cc: str, name: str) -> tuple[Status, str, str]:
    if supports(row, cc):
        return Status.PASS, f"{row.engine} {row.versions} supports cc {cc} ({name})", ""
    if row.experimental_from and supports(EngineSupport(**{**row.__dict__, "min_cc": row.experimental_from}), cc):
        return Status.WARN, f"{row.engine} supports cc {cc} only experimentally (needs {row.min_cc} for full support)", row.instead
    return Status.FAIL, f"{row.engine} {row.versions} needs cc {row.min_cc}+; {name} is cc {cc}: {row.below}", row.instead


def run(ctx: CheckContext) -> Finding:
    engine, why = plan_engine(ctx.plan, ctx.facts)
    card = ctx.card()
    if card is None:
        return CHECK.finding(Status.SKIP, f"skipped: the card's compute capability is unknown (engine {engine}, {why})")
    cc, name, _planned = card
    ev: dict = {"engine": str(engine), "chosen_because": why, "cc": cc}
    if engine == Engine.LLAMA_CPP:
        row = engine_support("llama.cpp")
        path = llama_cpp_path(cc)
        status, summary, fix = _judge(row, cc, name)
        if path is not None and status == Status.PASS:
            summary = (f"llama.cpp runs on {name} (cc {cc}): {path.kernels}; its own flash attention: {path.flash_attn}"
                       + (f"; {path.note}" if path.note else "") + ".")
            ev.update(kernel_path=path.kernels, flash_attention=path.flash_attn, kernel_path_source=path.source)
    elif engine == Engine.OLLAMA:
        status, summary, fix = _ollama(ctx, cc, name, ev)
    elif engine == Engine.TABBYAPI:
        status, summary, fix = _judge(engine_support("tabbyapi-main"), cc, name)
        row = engine_support("tabbyapi-main")
    elif engine == Engine.TRANSFORMERS:
        row = engine_support("llama.cpp")  # only for the source line below; bitsandbytes' floor is judged by compat
        t = TRANSFORMERS_BNB_NF4
        status = Status.WARN
        summary = (f"Transformers runs on cc {cc}, but with bitsandbytes 4-bit it decodes about x{t.decode_time_factor:g} "
                   f"slower than the ceiling ({t.what}; {t.card}).")
        fix = ("Run the same model in an engine with fused quantized kernels: llama.cpp with a GGUF (Q4_K_M) or "
               "ExLlamaV2 0.3.2 with EXL2; the reference story's first step went from 4 to 25 tok/s this way")
        ev.update(efficiency_source=t.source)
    else:
        row = engine_support("exllamav2")
        status, summary, fix = _judge(row, cc, name)
        if status == Status.PASS and not supports(engine_support("tabbyapi-main"), cc):
            summary += ("; serve it with TabbyAPI's exl2-checkpoint branch: TabbyAPI's main branch is EXL3-only and "
                        "refuses this card.")
    if engine not in (Engine.OLLAMA, Engine.TRANSFORMERS):
        ev.update(source=row.source, confidence=row.confidence, versions=row.versions)
    gap_text, gap_ev = engine_gap(ctx, engine, cc)
    ev.update(gap_ev)
    if gap_text and not summary.endswith("."):
        summary += "."
    return CHECK.finding(status, summary + gap_text, ev, fix)


def _ollama(ctx: CheckContext, cc: str, name: str, ev: dict) -> tuple[Status, str, str]:
    rows = {r: engine_support(f"ollama-{r}") for r in ("cuda_v12", "cuda_v13")}
    o = ctx.facts.engines.ollama if ctx.facts.engines is not None else None
    ev.update(source="; ".join(r.source for r in rows.values()))
    if o is None or not o.installed:
        need = [r for r, row in rows.items() if supports(row, cc)]
        if not need:
            return Status.FAIL, f"no Ollama runner supports cc {cc}", "llama.cpp built for this card"
        return (Status.PASS, f"Ollama runs on cc {cc} with its {' or '.join(need)} runner (Ollama is not installed here to "
                "see which runners it has)", "")
    ev.update(ollama_version=o.version, runners=list(o.runners))
    cuda = [r for r in o.runners if r in rows]
    usable = [r for r in cuda if supports(rows[r], cc)]
    if usable:
        return Status.PASS, f"Ollama {o.version} can run {name} (cc {cc}) with its {', '.join(usable)} runner", ""
    if not cuda:
        return (Status.FAIL, f"Ollama {o.version} has no CUDA runner installed ({', '.join(o.runners) or 'none'}): every model "
                "runs on the CPU", rows["cuda_v12"].instead)
    return (Status.FAIL, f"Ollama {o.version} has only {', '.join(cuda)} runners, which start at cc "
            f"{min(rows[r].min_cc for r in cuda)}: {name} (cc {cc}) is skipped and models run on the CPU (library=cpu), "
            "without an error", rows["cuda_v13"].instead)


CHECK = Check(id=CheckId.ENGINE, title="The plan's engine on this card", run=run, depends_on=(CheckId.COMPUTE_CAPABILITY,),
              blocked_by=(Status.ERROR,))
