"""`memory-budget`: weights + KV cache + scratch + CUDA context against free VRAM on each GPU.

The arithmetic is doctor/knowledge/arithmetic/vram_budget.py; this check picks the plan's numbers, judges the margin, and
orders the fixes by cost: lower max_seq_len, quantize the cache, fewer bits per weight, a smaller model.
"""

from __future__ import annotations

import shlex

from checks.base import Check, CheckContext
from checks.model.card import Card, card_for
from checks.model.common import AFTER_MODEL_PATH, unreadable_reason
from doctor.knowledge.arithmetic.model_bytes import ArithmeticUnavailable, ModelBytes, ModelDims, dims, model_bytes
from doctor.knowledge.arithmetic.vram_budget import Budget, largest_fitting_seq_len, plan_budget
from doctor.knowledge.exllamav2_memory import CUDA_CONTEXT_HOPPER_MIB, CUDA_CONTEXT_MIB, DEFAULT_MAX_SEQ_LEN, EMBEDDING_ON_HOST, cuda_context_bytes
from doctor.knowledge.kv_cache import CACHE_MODE_ORDER, KV_CACHE_MODES, SLIDING_WINDOW_NOTE
from doctor.model.findings import Finding, Status
from doctor.model.ids import CheckId
from doctor.model.model_dir import ModelFacts
from doctor.model.units import GIB, MIB, human_bytes
from doctor.model.unknown import Maybe, known

NOT_EXLLAMAV2 = ("awq", "bnb-4bit", "bnb-8bit", "gguf")  # doctor/knowledge/formats.py: cannot-load rows
TIGHT_MARGIN_MIB = 128  # the CUDA context alone varies by about this much across drivers and torch builds
FALLBACK_SEQ_LEN = 2048


def seq_len_for(ctx: CheckContext, d_max_pos: Maybe[int] | None) -> tuple[int, str]:
    if ctx.plan.max_seq_len:
        return ctx.plan.max_seq_len, "--max-seq-len"
    if known(d_max_pos):
        return d_max_pos, "ExLlamaV2's default: max_position_embeddings from config.json (no --max-seq-len given)"
    return FALLBACK_SEQ_LEN, "ExLlamaV2's fallback 2048 (no --max-seq-len, no max_position_embeddings)"


def is_quantized(model: ModelFacts) -> bool:
    return bool(model.quant and model.quant.method in ("exl2", "gptq"))


def _mib(b: float) -> int:
    return int(round(b / MIB))


def bpw_that_fits(mb: ModelBytes, budget: Budget, bits: float) -> float | None:
    """The largest bits per weight (0.05 steps) at which the decoder layers fit the shortfall away."""
    layers = sum(mb.layer_bytes)
    room = layers + budget.margin_bytes
    if room <= 0 or not layers:
        return None
    fit = int(bits * room / layers * 20) / 20
    return fit if 2.0 <= fit < bits else None


def _table(mb: ModelBytes, d: ModelDims, card: Card, split: tuple[float, ...] | None, quantized: bool, upper: int) -> dict[str, int]:
    ctx = cuda_context_bytes(card.cc)
    return {mode: largest_fitting_seq_len(mb, d, list(card.rooms), mode, split, quantized, upper, ctx) for mode in CACHE_MODE_ORDER}


def manual_split_budget(mb: ModelBytes, d: ModelDims, card: Card, seq: int, mode: str, quantized: bool) -> Budget:
    """The same plan loaded with model.load(gpu_split) at each GPU's free GB: no autosplit reserves or test pass."""
    split = tuple(round(r.free_mib / 1024, 2) for r in card.rooms)
    return plan_budget(mb, d, list(card.rooms), seq, mode, split, quantized, cuda_context_bytes(card.cc))


def _fixes(ctx: CheckContext, m: ModelFacts, mb: ModelBytes, budget: Budget, table: dict[str, int], seq: int,
           manual: Budget | None = None) -> tuple[str, list[str]]:
    mode = ctx.plan.cache_mode
    steps, commands = [], []
    path = shlex.quote(ctx.plan.model_path or "MODEL")
    if manual is not None and manual.fits and not budget.fits:
        split = ",".join(f"{r.free_bytes / GIB:.1f}" for r in manual.devices)
        steps.append(f"load with model.load(gpu_split=[{split}]) instead of load_autosplit: it skips the autosplit reserves "
                     f"and test pass and fits with {_mib(manual.margin_bytes)} MiB to spare (TabbyAPI: gpu_split_auto: false)")
        commands.append(f"v100-doctor --model {path} --max-seq-len {seq} --cache-mode {mode} --gpu-split {split}")
    if table.get(mode, 0) >= 256:
        n = table[mode]
        steps.append(f"lower max_seq_len to {n} or less (fits with the {mode} cache)")
        commands.append(f"v100-doctor --model {path} --max-seq-len {n} --cache-mode {mode}")
    better = [(k, v) for k, v in table.items() if v >= seq and KV_CACHE_MODES[k].bytes_per_e < KV_CACHE_MODES[mode].bytes_per_e]
    if better:
        k, v = max(better, key=lambda kv: KV_CACHE_MODES[kv[0]].bytes_per_e)
        steps.append(f"quantize the cache: {k} holds all {seq} tokens (fits up to {v})")
        commands.append(f"v100-doctor --model {path} --max-seq-len {seq} --cache-mode {k}")
    elif any(v > table.get(mode, 0) for v in table.values()):
        k = max(table, key=table.__getitem__)
        steps.append(f"quantize the cache: {k} fits up to {table[k]} tokens")
    q = m.quant
    if q and known(q.bits) and q.method == "exl2":
        fit = bpw_that_fits(mb, budget, float(q.bits))
        if fit:
            steps.append(f"a smaller quant: about {fit:g} bpw EXL2 fits at {seq} tokens with the {mode} cache")
    elif q and q.method in ("fp16", "bf16", "fp32"):
        steps.append("quantize the weights: a 4-bit EXL2 quant needs about a quarter of the FP16 bytes")
    steps.append("a smaller model")
    commands.append("# ExLlamaV2: config.max_seq_len = N; cache = ExLlamaV2Cache_Q8(model, max_seq_len=N, lazy=True); "
                    "model.load_autosplit(cache)")
    numbered = "; ".join(f"{i}) {s}" for i, s in enumerate(steps, 1))
    return f"Options, cheapest first: {numbered}.", commands


def _context_note(cc: str | None) -> str:
    value, source, conf = CUDA_CONTEXT_HOPPER_MIB if cuda_context_bytes(cc) == CUDA_CONTEXT_HOPPER_MIB[0] * MIB else CUDA_CONTEXT_MIB
    return f"{value} MiB [{conf}]: {source}"


def _evidence(budget: Budget, card: Card, mb: ModelBytes, seq: int, seq_source: str, table: dict, d: ModelDims, ctx: CheckContext) -> dict:
    per_gpu = []
    for dev in budget.devices:
        row: dict[str, object] = {k: _mib(v) for k, v in dev.components.items() if k != "transient_is"}
        row.update(gpu=dev.index, layers=dev.layers, peak_mib=_mib(dev.peak_bytes), free_mib=_mib(dev.free_bytes),
                   margin_mib=_mib(dev.margin_bytes),
                   transient_is="load_autosplit's reserves and test pass" if dev.components.get("transient_is") else "decode/prefill working set")
        per_gpu.append(row)
    ev = {"gpu_source": card.source, "card": card.name, "loader": budget.loader, "max_seq_len": seq, "max_seq_len_from": seq_source,
          "cache_mode": budget.cache_mode, "weights_source": mb.source, "per_gpu": per_gpu,
          "margin_mib": _mib(budget.margin_bytes), "max_seq_len_that_fits": table,
          "kv_bytes_per_token": KV_CACHE_MODES[budget.cache_mode].bytes_per_token(d.layers, d.kv_heads, d.head_dim),
          "host_ram_embedding_mib": _mib(mb.embedding_bytes), "embedding_note": EMBEDDING_ON_HOST[0],
          "cuda_context_estimate": _context_note(card.cc)}
    if budget.unplaced_layers:
        ev["layers_that_do_not_fit"] = budget.unplaced_layers
    notes = list(mb.notes) + list(budget.notes)
    assert ctx.facts.model is not None  # run(): a model was read
    cfg = ctx.facts.model.config
    if cfg and known(cfg.sliding_layers) and cfg.sliding_layers:
        notes.append(f"{cfg.sliding_layers} sliding-window layers: {SLIDING_WINDOW_NOTE[0]}")
    if notes:
        ev["notes"] = notes
    return ev


def run(ctx: CheckContext) -> Finding:
    m = ctx.facts.model
    if m is None or not m.exists or (m.problem and m.weights is None and m.config is None):
        return CHECK.finding(Status.SKIP, f"skipped: {unreadable_reason(m, ctx.plan)}")
    a = ctx.adapter
    if not a.uses_exllamav2 and not ctx.engine.assumed:  # this budget is ExLlamaV2's loader and cache
        where = "gguf-budget budgets it" if "gguf" in a.formats else "its memory is not modelled by the doctor"
        return CHECK.finding(Status.SKIP, f"skipped: this is ExLlamaV2's VRAM budget; the engine judged is {a.label} "
                             f"({where})", {"engine": str(ctx.engine.engine)})
    if m.quant and m.quant.method in NOT_EXLLAMAV2:
        return CHECK.finding(Status.SKIP, f"skipped: ExLlamaV2 cannot load {m.quant.method}, so its VRAM budget does not "
                             "apply (see quant-format for the runtimes that can)")
    try:
        mb, d = model_bytes(m), dims(m.config)
    except ArithmeticUnavailable as exc:
        return CHECK.finding(Status.SKIP, f"skipped: {exc}", {"reason": str(exc)})
    card = card_for(ctx)
    if card is None:
        return CHECK.finding(Status.SKIP, "skipped: no GPU here to budget against; pass --target-gpu NAME to plan for a card "
                             "(v100-doctor --list-gpus)", {"weights_gpu_mib": _mib(mb.gpu_bytes), "weights_source": mb.source})
    max_pos = m.config.max_position_embeddings if m.config is not None else None
    seq, seq_source = seq_len_for(ctx, max_pos)
    split, quantized = ctx.plan.gpu_split, is_quantized(m)
    budget = plan_budget(mb, d, list(card.rooms), seq, ctx.plan.cache_mode, split, quantized, cuda_context_bytes(card.cc))
    upper = max(seq, max_pos if known(max_pos) else seq, 131072)
    table = _table(mb, d, card, split, quantized, upper)
    ev = _evidence(budget, card, mb, seq, seq_source, table, d, ctx)
    host_avail = ctx.facts.host.ram_available_mib if card.measured else None
    where = "" if card.measured else f" on the planning target {card.name} (not measured)"
    est = " (estimated from config)" if m.estimated_from_config else ""
    head = (f"{human_bytes(mb.gpu_bytes)} weights{est} + {_mib(sum(dv.components['kv_cache'] for dv in budget.devices))} MiB "
            f"{budget.cache_mode} cache at {seq} tokens")
    fits_line = ", ".join(f"{k} {v}" for k, v in table.items())
    if not budget.fits:
        short = -budget.margin_bytes
        summary = (f"does not fit{where}: {head} needs {_mib(short)} MiB more than the free VRAM "
                   f"(peak {_mib(max(dv.peak_bytes for dv in budget.devices))} MiB vs {_mib(min(dv.free_bytes for dv in budget.devices))} MiB free); "
                   f"largest max_seq_len that fits: {fits_line}")
        if "default" in seq_source:
            summary += f"; {DEFAULT_MAX_SEQ_LEN[0]}"
        manual = manual_split_budget(mb, d, card, seq, ctx.plan.cache_mode, quantized) if budget.loader == "load_autosplit" else None
        if manual is not None:
            ev["margin_mib_with_manual_load"] = _mib(manual.margin_bytes)
        fix, commands = _fixes(ctx, m, mb, budget, table, seq, manual)
        return CHECK.finding(Status.FAIL, summary, ev, fix, commands)
    margin = _mib(budget.margin_bytes)
    summary = f"fits{where}: {head}, {margin} MiB to spare ({budget.loader}); largest max_seq_len that fits: {fits_line}"
    if known(host_avail) and host_avail is not None and mb.embedding_bytes / MIB > host_avail:
        return CHECK.finding(Status.WARN, summary + f"; but the {_mib(mb.embedding_bytes)} MiB embedding ExLlamaV2 keeps in "
                             f"host RAM exceeds the {int(host_avail)} MiB available", ev, "Free host RAM or add swap before loading.")
    if margin < TIGHT_MARGIN_MIB:
        fix, commands = _fixes(ctx, m, mb, budget, table, seq)
        return CHECK.finding(Status.WARN, summary + f" (under {TIGHT_MARGIN_MIB} MiB: another process or a different driver "
                             "can tip it over)", ev, fix, commands)
    if "default" in seq_source:
        summary += f" (no --max-seq-len: budgeted at ExLlamaV2's default, {seq})"
    return CHECK.finding(Status.PASS, summary, ev)


CHECK = Check(id=CheckId("memory-budget"), title="VRAM budget: weights, KV cache, scratch", run=run, **AFTER_MODEL_PATH, order=40)
