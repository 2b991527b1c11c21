"""`gguf-budget`: llama.cpp's buffers for this GGUF at the planned context and cache, against the card's memory,
and the decode ceiling from the bytes each token reads (doctor/knowledge/arithmetic/gguf_budget.py)."""

from __future__ import annotations

from checks.base import Check, CheckContext
from checks.model.card import card_for
from doctor.knowledge.arithmetic.gguf_budget import SOURCE, GgufOption, decode_ceiling, gguf_budget
from doctor.knowledge.cuda_context import context_bytes
from doctor.model.findings import Finding, Status
from doctor.model.ids import CheckId
from doctor.model.model_dir import GgufFacts
from doctor.model.units import human_bytes

DEFAULT_CTX = 4096  # llama-server's -c default in the builds this doctor knows (common/common.h n_ctx = 4096)
MIB = 1024 * 1024


def option_for(ctx: CheckContext) -> tuple[GgufOption, list[str]]:
    """The option the plan describes, and which parts were assumed."""
    launch = ctx.plan.engine_launch
    assumed = []
    n_ctx = (launch.n_ctx if launch and launch.n_ctx else None) or ctx.plan.max_seq_len
    if not n_ctx:
        n_ctx = DEFAULT_CTX
        assumed.append(f"context {DEFAULT_CTX} (llama-server's default; give -c in --engine-config or --max-seq-len)")
    if launch is not None:
        launch = ctx.adapter.launch_in_force(launch, ctx.facts)
    k = (launch.cache_type_k if launch else None) or "f16"
    v = (launch.cache_type_v if launch else None) or "f16"
    fa = (launch.flash_attn if launch else None) or "auto"
    ngl = launch.n_gpu_layers if launch else None
    if ngl is None:
        assumed.append("every layer on the GPU (-ngl 99)")
    return GgufOption(n_ctx=n_ctx, cache_type_k=k, cache_type_v=v, flash_attn=fa != "off", n_gpu_layers=ngl,
                      n_ubatch=(launch.n_ubatch if launch and launch.n_ubatch else 512)), assumed


def run(ctx: CheckContext) -> Finding:
    a, engine = ctx.adapter, ctx.engine.engine
    m = ctx.facts.model
    g = m.gguf if m is not None else None
    if "gguf" not in a.formats or g is None:
        return CHECK.finding(Status.SKIP, "skipped: needs a GGUF model run by llama.cpp or Ollama")
    if g.shape is None or g.weights is None:
        return CHECK.finding(Status.SKIP, "skipped: the GGUF header has no decoder shape or tensor infos to budget from")
    card = card_for(ctx)
    if card is None:
        return CHECK.finding(Status.SKIP, "skipped: no GPU here and no --target-gpu")
    try:
        option, assumed = option_for(ctx)
        b = gguf_budget(g.shape, g.weights, option)
    except (ValueError, KeyError) as exc:
        return CHECK.finding(Status.SKIP, f"skipped: {exc}")
    overhead = context_bytes("llama.cpp", card.cc)
    room_mib = (card.rooms[0].free_mib if card.rooms else None)
    need = b.gpu_bytes + overhead
    ev = {"engine": str(engine), "option": {"n_ctx": option.n_ctx, "cache_type_k": option.cache_type_k,
          "cache_type_v": option.cache_type_v, "flash_attn": option.flash_attn, "n_gpu_layers": option.n_gpu_layers,
          "n_ubatch": option.n_ubatch},
          "assumed": assumed, "model_gpu_mib": round(b.model_gpu_bytes / MIB, 2), "kv_gpu_mib": round(b.kv_gpu_bytes / MIB, 2),
          "compute_gpu_mib": round(b.compute_gpu_bytes / MIB, 2), "cuda_context_mib": round(overhead / MIB),
          "model_host_mib": round(b.model_host_bytes / MIB, 2), "kv_host_mib": round(b.kv_host_bytes / MIB, 2),
          "offloaded": b.offloaded_text, "read_gpu_bytes_per_token": b.read_gpu_bytes,
          "read_host_bytes_per_token": b.read_host_bytes, "source": SOURCE}
    parts = (f"model {human_bytes(b.model_gpu_bytes)} + K/V {human_bytes(b.kv_gpu_bytes)} ({option.cache_type_k}/"
             f"{option.cache_type_v}, {b.kv_cells} cells) + compute {human_bytes(b.compute_gpu_bytes)} + CUDA context "
             f"~{human_bytes(overhead)} = {human_bytes(need)}")
    ceiling = ""
    if card.bandwidth_gbs and b.layers_on_gpu == b.n_layer and b.output_on_gpu:
        top = decode_ceiling(b, card.bandwidth_gbs)
        ev["ceiling_tok_s_empty_cache"] = round(top, 1)
        ceiling = f"; decode ceiling {top:.1f} tok/s ({card.bandwidth_gbs:g} GB/s / {human_bytes(b.read_gpu_bytes)} per token)"
    if room_mib is None:
        return CHECK.finding(Status.INFO, f"{a.label} will allocate {parts} on the GPU, {b.offloaded_text}{ceiling}", ev)
    ev["gpu_free_mib"] = room_mib
    if need <= room_mib * MIB:
        where = "free" if card.measured else "on the card"
        return CHECK.finding(Status.PASS, f"fits: {parts} of {room_mib:.0f} MiB {where}, {b.offloaded_text}{ceiling}", ev)
    fit = _layers_that_fit(g, option, room_mib * MIB - overhead)
    ev["layers_that_fit"] = fit
    v, total = a.vocabulary, g.shape.n_layer + 1
    weights_too_big = option.n_gpu_layers is None and b.model_gpu_bytes + b.compute_gpu_bytes + overhead > room_mib * MIB
    smaller = v.smaller_model if weights_too_big else v.fewer_bytes(option.n_ctx)  # no context makes the weights fit
    if option.n_gpu_layers is None and a.auto_offload:  # the engine fits what it can by itself: slow, not a failure
        return CHECK.finding(Status.WARN, f"does not fit whole: {parts} against {room_mib:.0f} MiB; {a.label} puts about "
                             f"{fit} of {total} layers on the GPU itself and decodes the rest from host memory, several "
                             "times slower", ev, f"In {v.settings_live_in}: use {smaller}, so that every layer fits; "
                             f"then {v.restart}.")
    layers = v.gpu_layers.format(n=fit) if v.gpu_layers else f"{fit} GPU layers"
    fix = (f"In {v.settings_live_in}: offload what fits, {layers} ({fit}/{total} layers; the rest decode from host memory, "
           f"several times slower), or use {smaller}")
    return CHECK.finding(Status.FAIL if option.n_gpu_layers is None or option.n_gpu_layers > fit else Status.WARN,
                         f"does not fit: {parts} against {room_mib:.0f} MiB; at most {fit} of {total} layers fit "
                         "on the GPU", ev, fix)


def _layers_that_fit(g: GgufFacts, option: GgufOption, room: float) -> int:
    from dataclasses import replace  # lazy: only a budget that does not fit searches for the layer count

    assert g.shape is not None and g.weights is not None  # run() skips a header without them

    for ngl in range(g.shape.n_layer + 1, -1, -1):
        if gguf_budget(g.shape, g.weights, replace(option, n_gpu_layers=ngl)).gpu_bytes <= room:
            return ngl
    return 0


CHECK = Check(id=CheckId("gguf-budget"), title="GGUF memory budget under llama.cpp", run=run,
              depends_on=(CheckId.MODEL_PATH,), blocked_by=(Status.SKIP, Status.ERROR), order=40)
