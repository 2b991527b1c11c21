"""The whole plan: every quantized version x cache type on each card (and on all the cards split), then the
answer first: the fastest option that fits the asked context, and the longest context that still runs at the
asked speed.

A quality floor (min_bpw, default 3.5) keeps the answer from a version too small to be useful: below it the
published perplexity cost climbs steeply (llama.cpp's table: +0.66 at Q3_K_M, 3.9 bpw; +1.63 at Q3_K_S, 3.6 bpw;
+3.5 at Q2_K); the reference story tried 3.5 bpw and kept 3.75. The table still shows the smaller versions.
"""

from __future__ import annotations

from doctor.engines import EngineAdapter
from doctor.knowledge.architectures import EXL2_LAST, EXL2_SINCE, EXL2_SOURCE
from doctor.knowledge.arithmetic import model_shape
from doctor.knowledge.arithmetic.model_bytes import dims
from doctor.knowledge.arithmetic.vram_budget import SEQ_STEP
from doctor.knowledge.context_window import beyond_training
from doctor.knowledge.gpus import GpuSpec
from doctor.knowledge.quant_quality import gguf_bpw
from doctor.model.model_dir import ModelConfig
from doctor.model.quant_plan import PlanAnswer, PlanRow, QuantCandidate, QuantPlan
from doctor.model.units import gb
from doctor.plan.concurrency import STREAMS_NOTE, with_concurrency
from doctor.plan.offload import offload_notes, offload_rows
from doctor.plan.rows import Setting, arithmetic, caches, context_cost, engines_for, row
from doctor.plan.speculative import with_speculative
from doctor.plan.users import users_answer

DEFAULT_MIN_BPW = 3.5
STANDARD_EXL2_BPW = (2.5, 3.0, 3.5, 3.75, 4.0, 4.25, 5.0, 6.0, 8.0)
STANDARD_GGUF = ("Q3_K_M", "Q4_K_M", "Q5_K_M", "Q6_K", "Q8_0")
CACHE_RANK = {"fp16": 0, "f16": 0, "q8": 1, "q8_0": 1, "q6": 2, "q4": 3, "q4_0": 3}  # quality order of caches
# Options within this share of the fastest one's expected speed count as equally fast, and the better quality one
# (more bits per weight, then a less quantized cache) is the answer: 5% is far inside the efficiency ranges
# (e.g. 0.63-0.90 on a V100), so a smaller gap is not a difference the plan can promise.
SAME_SPEED = 0.05


def standard_candidates() -> tuple[QuantCandidate, ...]:
    """The versions anyone can make with the engines' own converters, when the Hub lists none."""
    exl2 = [QuantCandidate("exl2", f"EXL2 {b:g} bpw", None, bpw=b, found="convert") for b in STANDARD_EXL2_BPW]
    gguf = [QuantCandidate("gguf", f"GGUF {t}", None, bpw=gguf_bpw(t), gguf_type=t, found="convert")
            for t in STANDARD_GGUF]
    return tuple(exl2 + gguf)


def base_candidates(base_repo: str | None, found: tuple[QuantCandidate, ...]) -> tuple[QuantCandidate, ...]:
    """The base model itself, for the engines that load its unquantized weights: Transformers in 4-bit NF4
    (bitsandbytes quantizes at load), vLLM in FP16. Only for a model with a Hub id, and not for a quantized repo."""
    if base_repo is None or any(c.repo == base_repo for c in found):
        return ()
    return (QuantCandidate("bnb-4bit", "NF4 4-bit (bitsandbytes)", base_repo, bpw=4.0),
            QuantCandidate("fp16", "FP16", base_repo, bpw=16.0))


def _runs(e: EngineAdapter, group: tuple[GpuSpec, ...], c: QuantCandidate, said: list[str]) -> bool:
    """Whether the engine gets rows for this version on these cards; what it said of the cards goes to the notes."""
    if e.plan is None or (len(group) > 1 and not e.plan.splits):
        return False
    for g in group:
        runs, release = e.plan_card(g.cc, c)
        if not runs:
            said.append(f"{e.label} does not run {c.label} on {g.key} (cc {g.cc}): no rows")
            return False
        if release:
            said.append(f"{e.label} on {g.key}: {release}")
    return True


def _loads(e: EngineAdapter, config: ModelConfig, said: list[str]) -> bool:
    """ExLlamaV2 keeps a complete list of the architectures it knows (doctor/knowledge/architectures.py); one it does
    not know (DeepSeek's MLA, gpt-oss) it would load as Llama and fail: no rows for it. Other engines' lists are not
    complete here, so they are not filtered."""
    arch = config.architecture
    if str(e.id) != "exllamav2" or not isinstance(arch, str) or arch in EXL2_SINCE:
        return True
    said.append(f"ExLlamaV2 {EXL2_LAST} does not know {arch} ({EXL2_SOURCE}): it would load it as Llama and fail, "
                "so it gets no rows")
    return False


def shape_text(config: ModelConfig) -> str:
    return model_shape.shape_text(dims(config))  # a MoE: experts, active ones, parameters (doctor/knowledge/arithmetic/model_shape.py)


def card_sets(cards: tuple[GpuSpec, ...]) -> list[tuple[GpuSpec, ...]]:
    """Each distinct card alone, then (with two or more) all of them split, in the order given."""
    alone = list({c.key: (c,) for c in cards}.values())
    return alone + ([cards] if len(cards) > 1 else [])


def build_plan(model: str, model_source: str, config: ModelConfig, candidates: tuple[QuantCandidate, ...],
               cards: tuple[GpuSpec, ...], context: int, min_tok_s: float | None = None,
               min_bpw: float = DEFAULT_MIN_BPW, engine: str | None = None, draft_bytes: int = 0,
               draft_name: str | None = None, base_repo: str | None = None,
               notes: tuple[str, ...] = (), exl2_flash_attn: bool | None = None,
               draft_weights: tuple[int, int] = (0, 0), users: int | None = None) -> QuantPlan:
    """`exl2_flash_attn`: whether ExLlamaV2 has flash-attn (None: as TabbyAPI installs it, on sm_80 and newer).
    `draft_weights`: the draft's (weight bytes, layers), for its speed-up; `users`: the answer for that many streams."""
    setting = Setting(config, dims(config), cards, draft_bytes, draft_name, base_repo, exl2_flash_attn)
    said = list(notes)
    usable: list[tuple[QuantCandidate, EngineAdapter]] = []
    for c in (candidates or standard_candidates()) + base_candidates(base_repo, candidates):
        engines = [e for e in engines_for(c) if (engine is None or str(e.id) == engine) and _loads(e, config, said)]
        if not engines_for(c):
            said.append(f"{c.label} ({c.repo}): no engine the doctor plans loads {c.fmt.upper()}; not planned")
        usable += [(c, e) for e in engines]
    if not candidates:
        said.append("no quantized version was found, so the plan lists the standard ones you can make with "
                     "ExLlamaV2's and llama.cpp's converters")
    rows: list[PlanRow] = []
    answers: list[PlanAnswer] = []
    for group in card_sets(cards):
        group_rows = []
        for c, e in usable:
            if not _runs(e, group, c, said):
                continue
            for cache in caches(str(e.id)):
                r = row(setting, c, group, cache, context, str(e.id))
                if e.plan is not None and e.plan.batched:
                    r = with_speculative(setting, with_concurrency(setting, r), *draft_weights)
                group_rows.append(r)
        group_rows += [with_speculative(setting, r, *draft_weights) for r in  # what does not fit whole, part in host RAM
                       offload_rows(setting, [c for c, e in usable if e.plan is not None and e.plan.offload], group,
                                    caches("llama.cpp"), context)]
        rows += group_rows
        answers += _answers(setting, group, group_rows, context, min_tok_s, min_bpw)
        if users:
            answers.append(users_answer(setting, _where(group), group_rows, users, min_tok_s, min_bpw))
    said += offload_notes(rows)
    if beyond := beyond_training(config, context):  # the context past what the model was trained for
        said.insert(0, beyond)
    said += [e.plan.note for e in dict.fromkeys(e for _, e in usable) if e.plan is not None and e.plan.note
             and any(r.engine == str(e.id) for r in rows)]
    if draft_bytes:
        said.append(f"the draft model ({draft_name}, {gb(draft_bytes, 2)} with its cache) is in every budget, on the "
                     "first GPU; 'with draft' is the single-stream speed it may give (an estimate, its range from the "
                     "acceptance rate)")
    said.append(STREAMS_NOTE)
    return QuantPlan(model, model_source, shape_text(config), tuple(c.key for c in cards), context, min_tok_s, min_bpw,
                     engine, tuple(rows), tuple(answers), tuple(dict.fromkeys(said)))


def _where(group: tuple[GpuSpec, ...]) -> str:
    return group[0].key if len(group) == 1 else " + ".join(c.key for c in group) + " (split)"


def _label(r: PlanRow) -> str:
    return f"{r.option.label} with the {r.cache} cache on {r.engine}"


def _answers(s: Setting, group: tuple[GpuSpec, ...], rows: list[PlanRow], context: int, min_tok_s: float | None,
             min_bpw: float) -> list[PlanAnswer]:
    where = _where(group)
    good = [r for r in rows if (r.bpw or 16) >= min_bpw]
    fitting = [r for r in good if r.fits]
    q1 = f"fastest at {context} tokens of context on {where} (speed with half of it in the cache)"
    if fitting:
        top = max(r.speed.mid for r in fitting)
        near = [r for r in fitting if r.speed.mid >= top * (1 - SAME_SPEED)]
        best = max(near, key=lambda r: (r.bpw or 16, -CACHE_RANK.get(r.cache, 9), r.speed.mid))
        s1 = (f"{_label(best)}: {best.speed.mid:g} tok/s expected ({best.speed.low:g}-{best.speed.high:g}; ceiling "
              f"{best.ceiling_tok_s:g}), peak {gb(max(best.peak_bytes), 2)} of {gb(min(best.capacity_bytes), 2)}, "
              f"fits up to {best.max_context} tokens")
        if best.speed.mid < top:
            s1 += f" (the fastest, at {top:g} tok/s, is within {SAME_SPEED:.0%}: the better quality one is chosen)"
        s1 += _other_engine(s, group, best, fitting, context)
        first = PlanAnswer(q1, best, context, s1)
    else:
        closest = min(good or rows, key=lambda r: max(p - c for p, c in zip(r.peak_bytes, r.capacity_bytes)),
                      default=None)
        s1 = (f"nothing at or above {min_bpw:g} bpw fits {context} tokens; the closest, {_label(closest)}, is "
              f"{closest.why_not}" if closest else "no option to plan")
        first = PlanAnswer(q1, None, context, s1)
    return [first, _longest(s, group, good, min_tok_s, min_bpw)]


def _other_engine(s: Setting, group: tuple[GpuSpec, ...], best: PlanRow, fitting: list[PlanRow], context: int) -> str:
    """The best fitting option of the other engine, with its speed here and at a short context, and what its
    context term costs at this one: why the answer is not on that engine, in numbers."""
    other = [r for r in fitting if arithmetic(r.engine) != arithmetic(best.engine)]  # Ollama's figures are llama.cpp's
    if not other:
        return ""
    top = max(r.speed.mid for r in other)
    alt = max((r for r in other if r.speed.mid >= top * (1 - SAME_SPEED)),
              key=lambda r: (r.bpw or 16, -CACHE_RANK.get(r.cache, 9), r.speed.mid))
    short = row(s, alt.option, group, alt.cache, 2 * SEQ_STEP).speed.mid
    cost = context_cost(s, alt, group, context // 2)
    return (f"; on {alt.engine} the fastest that fits, {alt.option.label} with the {alt.cache} cache, is expected at "
            f"{alt.speed.mid:g} tok/s ({alt.speed.low:g}-{alt.speed.high:g}) with {context // 2} tokens in the cache "
            f"({short:g} with {SEQ_STEP}){': ' + cost if cost else ''}")


def _longest(s: Setting, group: tuple[GpuSpec, ...], rows: list[PlanRow], min_tok_s: float | None,
             min_bpw: float) -> PlanAnswer:
    where = _where(group)
    rows = [r for r in rows if r.offload is None]  # an offload row is planned at the asked context only
    if min_tok_s is None:
        q = f"longest context on {where} (no --min-tok-s)"
        best = max((r for r in rows if r.max_context), key=lambda r: (r.max_context, r.speed.mid), default=None)
        if best is None:
            return PlanAnswer(q, None, 0, f"no option at or above {min_bpw:g} bpw fits even {SEQ_STEP} tokens")
        return PlanAnswer(q, best, best.max_context, f"{_label(best)}: {best.max_context} tokens fit, "
                                                     f"{best.speed_full.mid:g} tok/s expected at {best.context}")
    q = f"longest context at {min_tok_s:g} tok/s or more on {where}"
    found: list[tuple[int, float, PlanRow]] = []
    for r in rows:
        n = _longest_at_speed(s, r, min_tok_s)
        if n:
            found.append((n, r.speed.mid, r))
    if not found:
        fastest = max(rows, key=lambda r: r.speed_full.mid, default=None)
        why = (f"; the fastest option here, {_label(fastest)}, is expected at {fastest.speed_full.mid:g} tok/s with "
               f"{fastest.context} tokens in the cache") if fastest else ""
        return PlanAnswer(q, None, 0, f"no option at or above {min_bpw:g} bpw reaches {min_tok_s:g} tok/s{why}")
    n, _, best = max(found, key=lambda t: (t[0], t[1]))
    return PlanAnswer(q, best, n, f"{_label(best)}: {n} tokens at {min_tok_s:g} tok/s or more (speed falls as the "
                                  f"cache fills; fits up to {best.max_context})")


def _longest_at_speed(s: Setting, r: PlanRow, min_tok_s: float) -> int:
    """The longest context (a multiple of 256, at most what fits) at which the row's expected speed still reaches
    min_tok_s. Time per token is linear in the context (weights + KV read), so two points give the line."""
    if not r.max_context:
        return 0
    cards = tuple(next(g for g in s.cards if g.key == k) for k in r.cards)
    a, b = SEQ_STEP, max(2 * SEQ_STEP, r.max_context)
    sa, sb = (row(s, r.option, cards, r.cache, n).speed_full.mid for n in (a, b))
    if sa < min_tok_s:
        return 0
    if sb >= min_tok_s:
        return r.max_context
    ms_a, ms_b, ms_goal = 1000 / sa, 1000 / sb, 1000 / min_tok_s
    n = a + (ms_goal - ms_a) * (b - a) / (ms_b - ms_a)
    return max(0, min(r.max_context, int(n) // SEQ_STEP * SEQ_STEP))
