"""The engine gap: how fast the other engines would decode on this card, beside the user's engine.

Measured where the doctor ran them (probe --compare-engines: its synthetic model of the same layer shape in each
engine's format, on this card, doctor/probe/engine_gap.py), with both figures; otherwise estimated from the ceiling
at the user's bytes per token x that engine's published or measured share on this architecture
(doctor/knowledge/engine_efficiency.py), labelled with its source. No gap when the user's engine is the fastest.
This is the reference story's stage 1 (Transformers + bitsandbytes 4 tok/s, ExLlamaV2 25), measured instead of told.
"""

from __future__ import annotations

from dataclasses import replace

from doctor.knowledge.engine_efficiency import expected_share
from doctor.model.engine_probe import EngineMeasurement
from doctor.model.engine_verdict import EngineGap, OtherEngine

ENGINES = ("exllamav2", "llama.cpp", "transformers")
FORMAT = {"exllamav2": "EXL2/GPTQ 4-bit", "llama.cpp": "GGUF Q4_K_M", "transformers": "bitsandbytes NF4"}
NOTABLE = 1.2  # another engine this much faster is a gap worth a line of its own
__all__ = ["ENGINES", "FORMAT", "EngineGap", "OtherEngine", "engine_gap", "estimate"]


def estimate(engine: str, fam: str, ceiling_tok_s: float) -> OtherEngine:
    """An engine's expected decode here: the ceiling x its share on this architecture, with the row's source."""
    share, _confidence, src = expected_share(engine, fam)
    return OtherEngine(engine, round(ceiling_tok_s * share, 1), "estimated",
                       f"{share:.0%} of the {ceiling_tok_s:.1f} tok/s ceiling at the same bytes per token", src)


def engine_gap(engine: str, tok_s: float, fam: str, ceiling_tok_s: float,
               measured: tuple[EngineMeasurement, ...] = (), bound: str = "") -> EngineGap:
    """The other engines beside the user's `engine` measured at `tok_s`: measured ones as measured (on this card),
    the rest estimated. `bound`: why an estimate from the ceiling is only an upper bound here (a launch-bound decode:
    on the H200 the estimates from the bandwidth shares read 830.8 and 750.4 tok/s where --compare-engines then
    measured 686.0 and 403.3, issue 35); the estimates then say "up to"."""
    others: list[OtherEngine] = []
    for name in ENGINES:
        if name == engine:
            continue
        m = next((m for m in measured if m.engine == name and m.outcome == "ok" and m.tok_s), None)
        if m is not None and m.tok_s:
            per = f", {m.bytes_per_token / 1e9:.2f} GB per token" if m.bytes_per_token else ""
            others.append(OtherEngine(name, round(m.tok_s, 1), "measured", f"{m.format} on {m.label}{per}",
                                      "this probe (--compare-engines), on this card"))
        else:
            e = estimate(name, fam, ceiling_tok_s)
            others.append(replace(e, basis="estimated upper bound", how=f"{e.how}; {bound}") if bound else e)
    others.sort(key=lambda o: -o.tok_s)
    gap = EngineGap(engine, tok_s, tuple(others))
    faster = [o for o in others if o.tok_s > tok_s]
    # a measurement on this card leads; an estimate leads only where nothing faster was measured
    lead = next((o for o in faster if o.basis == "measured"), faster[0] if faster else None)
    if lead is None:
        summary = f"{engine} is the fastest engine here: " + "; ".join(_line(o) for o in others)
    else:
        ratio = lead.tok_s / tok_s if tok_s > 0 else float("inf")
        head = (f"{lead.engine} would decode x{ratio:.1f} faster here ({lead.tok_s:g} vs {tok_s:g} tok/s, {lead.basis})"
                if ratio >= NOTABLE else f"{lead.engine} is about as fast here ({lead.tok_s:g} vs {tok_s:g} tok/s, {lead.basis})")
        summary = head + ": " + "; ".join(_line(o) for o in [lead] + [o for o in others if o is not lead])
    return replace(gap, summary=summary)

def _line(o: OtherEngine) -> str:
    return f"{o.engine} {o.tok_s:g} tok/s {o.basis} ({o.how}; {o.source})"
