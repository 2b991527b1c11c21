"""`plan MODEL --users N`: the option that gives N concurrent users the highest speed each, at the asked context
and above --min-tok-s; or that none does here, and what would (a shorter context, a smaller version, a second card).
Every speed is doctor/plan/concurrency.py's estimate at N streams."""

from __future__ import annotations

from doctor.model.quant_plan import PlanAnswer, PlanRow, StreamsEstimate
from doctor.plan import concurrency as cc
from doctor.plan.rows import Setting


def _label(r: PlanRow) -> str:
    return f"{r.option.label} with the {r.cache} cache on {r.engine}"


def for_users(s: Setting, r: PlanRow, users: int) -> StreamsEstimate:
    """N streams on this row: each at the row's context while the cache holds N of them whole (or the engine takes
    them in turn), else the cache split N ways."""
    if users <= r.streams or not cc.batches(s, r):
        return cc.at_streams(s, r, users)
    ctx = min(r.context, cc.cache_tokens(s, r) // users // cc.SEQ_STEP * cc.SEQ_STEP)
    return cc.at_streams(s, r, users, ctx)


def _says(r: PlanRow, e: StreamsEstimate) -> str:
    p, t = e.per_stream_tok_s, e.total_tok_s
    turn = "" if e.streams == 1 or t.mid > p.mid * 1.01 else ", the streams taking turns"
    return (f"{_label(r)}: {p.mid:g} tok/s each ({p.low:g}-{p.high:g}), {t.mid:g} in total{turn}, "
            f"{e.context_per_stream} tokens of context each (an estimate)")


def users_answer(s: Setting, where: str, rows: list[PlanRow], users: int, min_tok_s: float | None,
                 min_bpw: float) -> PlanAnswer:
    speed = f" at {min_tok_s:g} tok/s or more each" if min_tok_s else ""
    q = f"{users} users at once on {where}{speed}"
    fitting = [r for r in rows if r.fits and r.concurrency]  # not a row partly in host RAM: not estimated batched
    good = [r for r in fitting if (r.bpw or 16) >= min_bpw]
    sized = [(r, for_users(s, r, users)) for r in good]
    whole = [(r, e) for r, e in sized if e.context_per_stream >= r.context]
    enough = [(r, e) for r, e in whole if min_tok_s is None or e.per_stream_tok_s.mid >= min_tok_s]
    if enough:
        r, e = max(enough, key=lambda t: (t[1].per_stream_tok_s.mid, t[0].bpw or 16))
        return PlanAnswer(q, r, r.context, _says(r, e))
    if not fitting:
        return PlanAnswer(q, None, 0, f"no option fits {users} users here: nothing fits even one stream on the GPU "
                                      "alone (batched decode is not estimated for one partly in host RAM)")
    why = []
    if whole:
        r, e = max(whole, key=lambda t: t[1].per_stream_tok_s.mid)
        why.append(f"the best at {rows[0].context} tokens each is {_says(r, e)}")
    else:
        why.append(f"no option at or above {min_bpw:g} bpw holds {users} streams of {rows[0].context} tokens")
    if min_tok_s is not None:
        shorter = [(r, e) for r, e in sized if e.per_stream_tok_s.mid >= min_tok_s and e.context_per_stream < r.context]
        if shorter:
            r, e = max(shorter, key=lambda t: (t[1].context_per_stream, t[1].per_stream_tok_s.mid))
            why.append(f"a shorter context would: {_says(r, e)}")
        smaller = [(r, for_users(s, r, users)) for r in fitting if (r.bpw or 16) < min_bpw]
        smaller = [(r, e) for r, e in smaller if e.per_stream_tok_s.mid >= min_tok_s]
        if smaller:
            r, e = max(smaller, key=lambda t: (t[0].bpw or 0, t[1].per_stream_tok_s.mid))
            why.append(f"a version under --min-bpw {min_bpw:g} would: {_says(r, e)}")
    if len(rows[0].cards) == 1:
        why.append("a second card holds more streams: plan again with --target-gpu given twice (the model split over "
                   "both)")
    return PlanAnswer(q, None, 0, f"none reaches {users} users{speed} here; " + "; ".join(why))
