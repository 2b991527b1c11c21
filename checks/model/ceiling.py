"""`ceiling`: the fastest single-stream decode this card can physically give this model (information).

Ceiling = memory bandwidth / bytes read per token (doctor/knowledge/arithmetic/decode_bytes.py), shown at an empty cache (the
seed's basis) and at the full max_seq_len, next to the seed's reference figures.
"""

from __future__ import annotations

from checks.base import Check, CheckContext
from checks.model.card import Card, card_for
from checks.model.common import AFTER_MODEL_PATH, unreadable_reason
from checks.model.memory_budget import is_quantized, seq_len_for
from doctor.knowledge.arithmetic.decode_bytes import ArithmeticUnavailable, bytes_per_token, ceiling_tok_s
from doctor.knowledge.arithmetic.gguf_budget import SOURCE as GGUF_SOURCE
from doctor.knowledge.arithmetic.gguf_budget import GgufOption, gguf_budget
from doctor.knowledge.arithmetic.model_bytes import dims, model_bytes
from doctor.knowledge.arithmetic.split_ceiling import SplitCeiling, split_ceiling
from doctor.knowledge.arithmetic.vram_budget import plan_budget
from doctor.knowledge.exllamav2_memory import cuda_context_bytes
from doctor.knowledge.gpus import spec_for_name
from doctor.model.findings import Finding, Status
from doctor.model.ids import CheckId
from doctor.model.model_dir import ModelFacts
from doctor.model.reference import SEED_REFERENCE
from doctor.model.units import human_bytes


def run(ctx: CheckContext) -> Finding:
    m = ctx.facts.model
    if m is None or not m.exists or (m.problem and m.weights is None and m.config is None):
        return CHECK.finding(Status.SKIP, f"skipped: {unreadable_reason(m, ctx.plan)}")
    card = card_for(ctx)
    if card is None or card.spec is None:  # the bandwidth is the knowledge base's
        why = "no GPU here and no --target-gpu" if card is None else f"the bandwidth of {card.name} is not in the knowledge base"
        return CHECK.finding(Status.SKIP, f"skipped: {why} (v100-doctor --list-gpus)")
    if m.gguf is not None:
        return _gguf(m, card)
    mode = ctx.plan.cache_mode
    try:
        empty = bytes_per_token(m, 0, mode)
        seq, seq_source = seq_len_for(ctx, m.config.max_position_embeddings if m.config is not None else None)
        full = bytes_per_token(m, seq, mode)
    except ArithmeticUnavailable as exc:
        return CHECK.finding(Status.SKIP, f"skipped: {exc}", {"reason": str(exc)})
    spec = card.spec
    bw = spec.bandwidth_gbs
    top, low = ceiling_tok_s(empty["total_bytes"], bw), ceiling_tok_s(full["total_bytes"], bw)
    est = " (estimated from config)" if m.estimated_from_config else ""
    where = "" if card.measured else " (planning target, not measured)"
    ref = SEED_REFERENCE
    summary = (f"decode ceiling {top:.1f} tok/s on {card.name}{where}: {bw:g} GB/s / {human_bytes(empty['total_bytes'])} read per "
               f"token{est}; {low:.1f} tok/s with {seq} tokens of {mode} cache. Reference: the seed measured "
               f"{ref['measured_tok_s']:g} tok/s against a {ref['ceiling_tok_s']:g} tok/s ceiling ({ref['weights_gb']:g} GB, "
               f"27B at {ref['bpw']:g} bpw, V100)")
    evidence = {"bandwidth_gbs": bw, "bandwidth_source": spec.source, "bandwidth_confidence": spec.confidence,
                "gpu_source": card.source, "ceiling_tok_s_empty_cache": round(top, 1), "ceiling_tok_s_full_cache": round(low, 1),
                "context_for_full": seq, "context_from": seq_source,
                "bytes_per_token_empty": {k: v for k, v in empty.items() if k.endswith("_bytes")},
                "bytes_per_token_full": {k: v for k, v in full.items() if k.endswith("_bytes")},
                "counted": full["counted"], "weights_source": full["source"], "seed_reference": ref}
    split = _split(ctx, card, m, seq)
    if split is not None:
        slow = split.slowest()
        evidence["split_ceiling_tok_s"] = round(split.tok_s, 1)
        evidence["split_shares"] = [f"CUDA {s.index} {s.name}: {human_bytes(s.bytes)} at {s.bandwidth_gbs:g} GB/s = "
                                    f"{s.ms_per_token:.2f} ms/token" for s in split.shares]
        summary = (f"split over {len(split.shares)} GPUs: decode ceiling {split.tok_s:.1f} tok/s (each GPU reads its share at "
                   f"its own bandwidth: {'; '.join(evidence['split_shares'])}); the slowest share is {slow.name}'s "
                   f"({slow.ms_per_token / split.ms_per_token:.0%} of each token's time). " + summary)
    return CHECK.finding(Status.INFO, summary, evidence)


def _split(ctx: CheckContext, card: Card, m: ModelFacts, seq: int) -> SplitCeiling | None:
    """The split ceiling when the model is spread over several GPUs (autosplit or --gpu-split); else None."""
    if len(card.rooms) < 2 or m.config is None:
        return None

    try:
        mb, d = model_bytes(m), dims(m.config)
    except ArithmeticUnavailable:
        return None
    budget = plan_budget(mb, d, list(card.rooms), seq, ctx.plan.cache_mode, ctx.plan.gpu_split, is_quantized(m),
                         cuda_context_bytes(card.cc))
    specs = [spec_for_name(r.name) for r in card.rooms]
    names = [r.name for r in card.rooms] + [card.rooms[-1].name] * len(budget.devices)
    bws = [s.bandwidth_gbs if s else None for s in specs] + [specs[-1].bandwidth_gbs if specs[-1] else None] * len(budget.devices)
    return split_ceiling(budget, list(zip(names, bws)))


def _gguf(m: ModelFacts, card: Card) -> Finding:
    """Bytes per token from the GGUF's tensor infos when the header has them (doctor/knowledge/arithmetic/gguf_budget.py);
    otherwise the file size stands in for bytes per token (an upper bound on reads)."""
    assert m.gguf is not None and card.bandwidth_gbs is not None  # run(): a GGUF model, a card with a known spec
    if m.gguf.shape is not None and m.gguf.weights is not None:
        return _gguf_tensors(m, card)
    size = m.gguf.file_bytes
    if not size:
        return CHECK.finding(Status.SKIP, "skipped: the GGUF file size is unknown")
    top = ceiling_tok_s(size, card.bandwidth_gbs)
    where = "" if card.measured else " (planning target, not measured)"
    return CHECK.finding(Status.INFO, f"decode ceiling about {top:.1f} tok/s on {card.name}{where} for this GGUF under llama.cpp: "
                         f"{card.bandwidth_gbs:g} GB/s / {human_bytes(size)} (the whole file taken as bytes per token, "
                         "so a slight underestimate of the ceiling; KV cache not counted)",
                         {"bandwidth_gbs": card.bandwidth_gbs, "gguf_file_bytes": size, "ceiling_tok_s_empty_cache": round(top, 1),
                          "gpu_source": card.source, "counted": "GGUF file size (embedding included)"})


def _gguf_tensors(m: ModelFacts, card: Card) -> Finding:
    assert m.gguf is not None and m.gguf.shape is not None and m.gguf.weights is not None  # _gguf(): a header with both
    assert card.bandwidth_gbs is not None  # run(): a card with a known spec
    b = gguf_budget(m.gguf.shape, m.gguf.weights, GgufOption(n_ctx=1))
    read = b.read_gpu_bytes  # every layer and the head once; the embedding table stays in host memory (one row read)
    top = ceiling_tok_s(read, card.bandwidth_gbs)
    where = "" if card.measured else " (planning target, not measured)"
    return CHECK.finding(Status.INFO, f"decode ceiling {top:.1f} tok/s on {card.name}{where} for this GGUF under llama.cpp: "
                         f"{card.bandwidth_gbs:g} GB/s / {human_bytes(read)} read per token (its tensors less the "
                         "embedding table, from the header; KV cache not counted)",
                         {"bandwidth_gbs": card.bandwidth_gbs, "gguf_file_bytes": m.gguf.file_bytes,
                          "bytes_per_token_empty": read, "ceiling_tok_s_empty_cache": round(top, 1),
                          "gpu_source": card.source, "counted": "GGUF tensor bytes less token_embd (header tensor infos)",
                          "source": GGUF_SOURCE})


CHECK = Check(id=CheckId("ceiling"), title="Physical decode ceiling", run=run, **AFTER_MODEL_PATH, order=50)
