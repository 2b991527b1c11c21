"""`flash-attn`: flash-attn installed on a card below its minimum cc is a crash waiting in ExLlamaV2."""

from __future__ import annotations

from checks.base import Check, CheckContext
from doctor.knowledge.attention import (
    EXLLAMAV2_ATTN_ORDER,
    EXLLAMAV2_FLASH_TRAP,
    FLASH_ATTN,
    FLASH_ATTN_COMMANDS,
    cc_at_least,
    flash_attn_fix,
    flash_attn_generation,
    flash_attn_supports,
)
from doctor.model.findings import Finding, Status
from doctor.model.ids import CheckId
from doctor.model.unknown import Maybe, known


def exllamav2_attention_path(packages: dict, env: dict, flash_ok: bool, cc: str | None = None) -> str:
    """Which attention ExLlamaV2 0.3.x will use, in its own order of preference, worded for this card's cc."""
    if flash_ok and known(packages.get("flash-attn")) and not env.get("EXLLAMA_NO_FLASH_ATTN"):
        return "flash-attn"
    if known(packages.get("xformers")) and not env.get("EXLLAMA_NO_XFORMERS"):
        on = f", which runs on this card's sm_{cc.replace('.', '')}" if cc and cc_at_least(cc, "7.0") else ""
        return f"xformers (memory-efficient attention{on})"
    if not env.get("EXLLAMA_NO_SDPA"):
        return "torch SDPA"
    return "matmul attention"


def run(ctx: CheckContext) -> Finding:
    card = ctx.card()
    if card is None:  # compute-capability warned: the recorded capability is unknown or not one
        return CHECK.finding(Status.SKIP, "skipped: the card's compute capability is unknown")
    cc = card[0]
    if ctx.adapter.flash_attn_use != "calls" and not ctx.engine.assumed:  # this machine's flash-attn, unless planning
        return not_called(ctx, cc, None if card[2] else ctx.facts.python.packages.get("flash-attn"))
    if card[2]:  # --target-gpu: which flash-attn the target can run, as a plan; this machine's packages are not judged
        runs = [f"flash-attn {g.major}.x" for g in FLASH_ATTN if flash_attn_supports(g, cc)]
        path = "flash-attn" if runs else "torch SDPA (or xformers where it is installed)"
        return CHECK.finding(Status.INFO, f"planning for {card[1]}: " + (f"{', '.join(runs)} run on cc {cc}" if runs else
                             f"no flash-attn generation runs on cc {cc}: do not install it on the target; ExLlamaV2 "
                             f"will use {path}") + " (this machine's packages are judged when the doctor runs on the target)",
                             {"cc": cc, "planning_target": ctx.plan.target_gpu, "flash_attn_that_runs": runs,
                              "min_cc": [g.min_cc for g in FLASH_ATTN]})
    packages, env = ctx.facts.python.packages, ctx.facts.python.env
    version = packages.get("flash-attn")
    if not known(version):
        path = exllamav2_attention_path(packages, env, False, cc)
        if ctx.engine.assumed:  # no engine named or found: say what it means for each, not for ExLlamaV2 alone
            return CHECK.finding(Status.PASS, f"flash-attn is not installed: llama.cpp, Ollama and vLLM do not call it; ExLlamaV2 "
                                 f"would use {path}", {"flash_attn": None, "exllamav2_attention": path,
                                                        "engine_assumed": True, "attention_order_source": EXLLAMAV2_ATTN_ORDER[1]})
        return CHECK.finding(Status.PASS, f"flash-attn is not installed; ExLlamaV2 will use {path} (no paged attention: "
                             "use the base/streaming generator or the dynamic one with paged=False)",
                             {"flash_attn": None, "exllamav2_attention": path, "attention_order_source": EXLLAMAV2_ATTN_ORDER[1]})
    gen = flash_attn_generation(version)
    if gen is None:
        return CHECK.finding(Status.WARN, f"flash-attn {version}: unknown generation, cannot judge it for cc {cc}", {"flash_attn": version})
    ok = flash_attn_supports(gen, cc)
    ev = {"flash_attn": version, "generation": gen.major, "min_cc": gen.min_cc, "cc": cc, "source": gen.source}
    if ok:
        path = exllamav2_attention_path(packages, env, True, cc)
        return CHECK.finding(Status.PASS, f"flash-attn {version} supports cc {cc}; ExLlamaV2 will use {path}", {**ev, "exllamav2_attention": path})
    path = exllamav2_attention_path(packages, env, False, cc)
    ev.update(exllamav2_attention_after_fix=path, trap=EXLLAMAV2_FLASH_TRAP[0], trap_source=EXLLAMAV2_FLASH_TRAP[1])
    card = ctx.card()
    fix = flash_attn_fix(gen, cc, path, card[1] if card is not None else None)
    if env.get("EXLLAMA_NO_FLASH_ATTN"):
        return CHECK.finding(Status.WARN, f"flash-attn {version} is installed but cannot run on cc {cc}; EXLLAMA_NO_FLASH_ATTN is set, "
                             "so ExLlamaV2 avoids it (other libraries may still try it)", ev, fix, [FLASH_ATTN_COMMANDS[0]])
    return CHECK.finding(Status.FAIL, f"flash-attn {version} is installed but needs cc {gen.min_cc}+ (this card: {cc}): ExLlamaV2 will crash "
                         f"with \"{gen.error}\"", ev, fix, list(FLASH_ATTN_COMMANDS))


def not_called(ctx: CheckContext, cc: str, version: Maybe[str] | None) -> Finding:
    """An engine that never calls the flash-attn package (llama.cpp, Ollama, vLLM), or calls it only when asked
    (Transformers): an installed flash-attn the card cannot run is a note, or a warning not to ask for it."""
    a = ctx.adapter
    installed = version is not None and known(version)
    ev: dict = {"flash_attn": version if installed else None, "engine": str(ctx.engine.engine), "cc": cc}
    gen = flash_attn_generation(str(version)) if installed else None
    if gen is None or flash_attn_supports(gen, cc):
        where = ("planning: this machine's packages are not judged" if version is None else
                 f"flash-attn {version} is installed" if installed else "flash-attn is not installed")
        return CHECK.finding(Status.PASS, f"{where}; {a.flash_attn_note}", ev)
    ev.update(generation=gen.major, min_cc=gen.min_cc, source=gen.source)
    if a.flash_attn_use == "opt-in":
        card = ctx.card()
        fix, commands = a.flash_attn_refusal(cc, card[1] if card is not None else None)
        return CHECK.finding(Status.WARN, f"flash-attn {version} is installed but needs cc {gen.min_cc}+ (this card: {cc}): "
                             f"{a.flash_attn_note}, and asking for it here fails with \"{gen.error}\"", ev, fix, commands)
    return CHECK.finding(Status.PASS, f"flash-attn {version} is installed but cannot run on cc {cc}; harmless here: "
                         f"{a.flash_attn_note}", ev)


CHECK = Check(id=CheckId("flash-attn"), title="flash-attn vs this card", run=run, depends_on=(CheckId.COMPUTE_CAPABILITY,), order=40, per_gpu=True)
