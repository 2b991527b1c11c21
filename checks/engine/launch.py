"""`engine-launch`: what the user's llama-server flags or Ollama parameters cost on this card.

Partial offload (GPU layers below the model's), judged here in the engine's vocabulary; and what the engine's own
rules say of its settings (EngineAdapter.launch_notes: a quantized V cache without flash attention, which llama.cpp
refuses and Ollama quietly ignores; flash attention switched off; a split mode llama.cpp removed), in its own words.
"""

from __future__ import annotations

from dataclasses import replace

from checks.base import Check, CheckContext
from checks.engine.gguf_fit import option_for
from checks.model.card import card_for
from doctor.knowledge.arithmetic.gguf_budget import gguf_budget
from doctor.knowledge.cuda_context import context_bytes
from doctor.model.findings import Finding, Status
from doctor.model.ids import CheckId
from doctor.model.units import human_bytes


def run(ctx: CheckContext) -> Finding:
    a, engine = ctx.adapter, ctx.engine.engine
    v = a.vocabulary
    launch = ctx.plan.engine_launch
    off = a.kept_off_gpu(ctx.facts)  # a setting in the engine's environment, with or without a launch config
    if off is not None:
        return CHECK.finding(off.status, off.summary, {"engine": str(engine), **off.evidence}, off.fix, off.commands)
    if launch is None:
        return CHECK.finding(Status.SKIP, "skipped: no --engine-config (a llama-server command line or an Ollama model's parameters)")
    if v.gpu_layers is None or "gguf" not in a.formats:
        return CHECK.finding(Status.SKIP, f"skipped: the launch config is {launch.engine}'s, the plan's engine is {engine}")
    launch = a.launch_in_force(launch, ctx.facts)
    fails: list[str] = []
    warns: list[str] = []
    fixes: list[str] = []
    ev: dict = {"engine": str(engine), "launch_source": launch.source, "settings": list(launch.notes)}
    m = ctx.facts.model
    shape = m.gguf.shape if m is not None and m.gguf is not None else None
    card = ctx.card()
    for note in a.launch_notes(launch, card[0] if card is not None else None):  # the engine's own rules, its words
        (fails if note.status == Status.FAIL else warns).append(note.summary)
        fixes.append(note.fix)
        ev.update(note.evidence)
    ngl = launch.n_gpu_layers
    layers = v.gpu_layers
    if ngl is not None and ngl >= 0 and shape is not None and ngl < shape.n_layer + 1:
        whole = whole_model_fits(ctx)
        warns.append(f"partial offload: {layers.format(n=ngl)} puts {min(ngl, shape.n_layer)} of {shape.n_layer} layers on "
                     f"the GPU (the log says \"offloaded {ngl}/{shape.n_layer + 1} layers to GPU\"); the rest decode from "
                     "host memory at its bandwidth, which sets the speed"
                     + (f", though the whole model fits ({whole})" if whole else ""))
        fixes.append(f"{layers.format(n=shape.n_layer + 1)}: every layer fits" if whole else
                     f"{layers.format(n=shape.n_layer + 1)} if it fits (gguf-budget says), else {v.smaller_model} or a "
                     f"shorter context ({v.context.format(n=4096)})")
        ev.update(n_gpu_layers=ngl, model_layers=shape.n_layer, whole_model_fits=whole or None)
    elif ngl is not None and ngl >= 0 and shape is None and ngl < 99:
        ev["n_gpu_layers"] = ngl
        warns.append(f"{layers.format(n=ngl)}: if the model has more layers, the rest run from host memory (give --model to "
                     "count them)")
    fix = f"In {v.settings_live_in}: " + "; ".join(f for f in fixes if f) + (f"; then {v.restart}." if v.restart else ".") \
        if any(fixes) else ""
    if fails:
        return CHECK.finding(Status.FAIL, "; ".join(fails + warns), ev, fix)
    if warns:
        return CHECK.finding(Status.WARN, "; ".join(warns), ev, fix)
    return CHECK.finding(Status.PASS, f"launch settings ({', '.join(launch.notes) or 'defaults'}) cost nothing on this card", ev)


def whole_model_fits(ctx: CheckContext) -> str:
    """'13.0 GB of 32448 MiB free' when every layer at the planned context fits on the card, else ''."""
    m = ctx.facts.model
    g = m.gguf if m is not None else None
    card = card_for(ctx)
    if g is None or g.shape is None or g.weights is None or card is None or not card.rooms:
        return ""
    try:
        option, _assumed = option_for(ctx)
        need = gguf_budget(g.shape, g.weights, replace(option, n_gpu_layers=None)).gpu_bytes + context_bytes("llama.cpp", card.cc)
    except (ValueError, KeyError):
        return ""
    room = card.rooms[0].free_mib
    return f"{human_bytes(need)} of {room:.0f} MiB free" if need <= room * 1024 * 1024 else ""


CHECK = Check(id=CheckId("engine-launch"), title="The engine's launch settings", run=run, depends_on=(CheckId.ENGINE,),
              blocked_by=(Status.ERROR,), order=30)
