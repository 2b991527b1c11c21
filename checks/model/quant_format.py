"""`quant-format`: which runtime and kernel path this weight format gets on this card.

Judged per runtime x kernel x compute capability (doctor/knowledge/formats.py), never per format alone:
pass when ExLlamaV2's fast kernels take it, warn when only a slower path or another runtime runs it,
fail when nothing known runs it on this card.
"""

from __future__ import annotations

from checks.base import Check, CheckContext
from checks.model.card import card_for
from checks.model.common import AFTER_MODEL_PATH, unreadable_reason
from doctor.knowledge.formats import FormatPath, paths_for
from doctor.model.findings import Finding, Status
from doctor.model.ids import CheckId
from doctor.model.model_dir import QuantFacts
from doctor.model.unknown import known

EXL2_HINT = "For ExLlamaV2's fast path get an EXL2 quant (or a 4-bit GPTQ one) of the same model."


def format_keys(q: QuantFacts) -> list[str]:
    """The knowledge-base rows this quantization falls under (GPTQ splits by bits and act-order)."""
    if q.method != "gptq":
        return [q.method]
    if known(q.bits) and q.bits != 4:
        return ["gptq-other-bits", "gptq"]
    act = q.act_order_in_tensors is True or q.desc_act is True
    return ["gptq-act-order", "gptq"] if act else ["gptq"]


def _describe(q: QuantFacts) -> str:
    if q.method == "exl2":
        bits = f"{q.bits:g} bpw" if known(q.bits) else "bpw not declared"
        head = f", head {q.head_bits:g} bits" if known(q.head_bits) else ""
        return f"EXL2 ({bits}{head})"
    if q.method == "gptq":
        bits = f"{q.bits:g}-bit" if known(q.bits) else "bits not declared"
        group = f", group {q.group_size}" if known(q.group_size) else ""
        act = ("act-order (desc_act) in the tensors" if q.act_order_in_tensors is True else
               "desc_act=True" if q.desc_act is True else "no act-order")
        return f"GPTQ {bits}{group}, {act}"
    if q.method == "awq":
        return f"AWQ {q.bits:g}-bit ({q.awq_version})" if known(q.bits) else f"AWQ ({q.awq_version})"
    if q.method == "bnb-4bit":
        return f"bitsandbytes 4-bit ({q.bnb_quant_type})"
    if q.method == "exl3":
        return f"EXL3 ({q.bits:g} bpw)" if known(q.bits) else "EXL3"
    return {"bnb-8bit": "bitsandbytes 8-bit", "fp16": "unquantized FP16", "bf16": "unquantized BF16",
            "fp32": "unquantized FP32", "gguf": "GGUF"}.get(q.method, q.method)


def _row(p: FormatPath) -> str:
    return f"{p.runtime}: {p.outcome} via {p.kernel} [{p.confidence}]"


def runs_in(row: FormatPath, names: tuple[str, ...]) -> bool:
    """A knowledge row is the engine's own when its runtime column names the engine ("transformers + bitsandbytes"
    is Transformers'; "transformers / vLLM / llama.cpp" is each of the three's)."""
    parts = [p.strip() for p in row.runtime.split(" / ")]
    return any(p == n or p.startswith(n + " ") for p in parts for n in names)


def _engine_cannot_load(rows: list[FormatPath], names: tuple[str, ...]) -> list[FormatPath] | None:
    """The engine's rows when it cannot load this format at all (every row cannot-load or refused), else None."""
    own = [r for r in rows if runs_in(r, names)]
    return own if own and all(r.outcome in ("cannot-load", "refused") for r in own) else None


def _verdict(rows: list[FormatPath], names: tuple[str, ...]) -> tuple[Status, FormatPath | None]:
    """Pass when the engine's fast kernels take the format (and no slow row applies on this card), warn when it or
    only another engine runs it slowly or not on its fast path, fail when nothing known runs it."""
    own = [r for r in rows if runs_in(r, names) and r.confidence in ("P", "S")]
    fast = next((r for r in own if r.outcome == "fast"), None)
    slow = next((r for r in own if r.outcome == "slow"), None)
    if fast and not slow:
        return Status.PASS, fast
    runs = [r for r in rows if r.outcome in ("fast", "works", "slow")]
    if runs:
        return Status.WARN, slow or next((r for r in own if r.outcome == "works"), None) or runs[0]
    return Status.FAIL, rows[0] if rows else None


def run(ctx: CheckContext) -> Finding:
    m = ctx.facts.model
    if m is None or m.quant is None:
        return CHECK.finding(Status.SKIP, f"skipped: {unreadable_reason(m, ctx.plan)}")
    q = m.quant
    card = card_for(ctx)
    cc = card.cc if card else None
    keys = format_keys(q)
    rows = [r for k in keys for r in paths_for(k, cc)]
    if keys[0] == "gptq-act-order":  # the plain-GPTQ ExLlamaV2 row is superseded by the act-order one
        rows = [r for r in rows if not (r.fmt == "gptq" and r.runtime == "ExLlamaV2")]
    what = _describe(q)
    evidence: dict[str, object] = {"format": q.method, "declared_in": q.declared_in, "tensor_format": q.tensor_format, "cc": cc,
                "card": card.source if card else "no GPU and no --target-gpu: judged for every card",
                "paths": [_row(r) for r in rows], "sources": sorted({r.source for r in rows})}
    if known(q.bits):
        evidence["bits"] = q.bits
    if q.method == "unknown" or not rows:
        return CHECK.finding(Status.WARN, f"format not recognised ({q.declared_in}): no runtime path known", evidence)
    a = ctx.adapter
    names = a.format_runtimes or ("ExLlamaV2",)
    evidence["engine"] = str(ctx.engine.engine)
    on = f" on cc {cc}" if cc else ""
    if not any(runs_in(r, names) for r in rows):  # no kernel-path row of this engine's: its own word on the format
        judged = a.judge_format(q.method, cc or "")
        if judged is None:  # it loads the format on its ordinary (torch) path
            return CHECK.finding(Status.PASS, f"{_describe(q)}{on}: {a.label} loads it on its own kernels (no measured "
                                 "kernel-path row for it here)", evidence)
        return CHECK.finding(judged.status, f"{_describe(q)}{on}: {judged.summary}", evidence,
                             judged.fix or a.vocabulary.fast_format)
    status, key_row = _verdict(rows, names)
    summary = f"{what}{on}: {key_row.runtime} {key_row.outcome} ({key_row.kernel})" if key_row else what
    if key_row and key_row.detail:
        summary += f"; {key_row.detail}"
    fix = ""
    refused = _engine_cannot_load(rows, names)
    if refused:  # one severity for "the engine cannot load this", whatever else could run it
        engine = refused[0].runtime
        others = [r for r in rows if r.runtime != engine and r.outcome in ("fast", "works", "slow")]
        can = "; ".join(f"{r.runtime}: {r.outcome} ({r.detail or r.kernel})" for r in others)
        evidence.update(plan_engine=engine, engines_that_can=[_row(r) for r in others])
        summary = (f"{what}{on}: {engine} {refused[0].outcome} ({refused[0].detail}); "
                   + (f"engines that run it on this card: {can}" if others else "no engine known to the doctor runs it on this card"))
        hint = a.vocabulary.fast_format or EXL2_HINT
        fix = ((f"Run it with an engine that can ({'; '.join(_row(r) for r in others)}), or " if others else "")
               + hint[0].lower() + hint[1:])
        return CHECK.finding(Status.FAIL, summary, evidence, fix)
    if q.disagreement:
        status = max(status, Status.WARN, key=[Status.PASS, Status.WARN, Status.FAIL].index)
        summary += f"; {q.disagreement}"
    if keys[0] == "gptq-act-order":
        seed_row = next((r for r in rows if r.confidence == "S"), None)
        if seed_row:
            evidence["seed_claim"] = seed_row.detail
    hint = a.vocabulary.fast_format or EXL2_HINT
    if status is Status.FAIL:
        fix = f"No runtime known to the doctor runs {what}{on}. " + hint
    elif status is Status.WARN and q.method == "exl2":
        fix = (f"{a.label} computes in FP16; on a card with 1:64 FP16 throughput use llama.cpp (GGUF), which can "
               "compute in FP32.")
    elif status is Status.WARN:
        alt = [_row(r) for r in rows if r.outcome in ("fast", "works")]
        fix = (f"Paths that work: {'; '.join(alt)}. " if alt else "") + hint
    return CHECK.finding(status, summary, evidence, fix)


CHECK = Check(id=CheckId("quant-format"), title="Weight format and kernel path", run=run, **AFTER_MODEL_PATH, order=20)
