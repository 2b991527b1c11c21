"""The verdict for a running engine server timed through its API (--engine-url): the decode ceiling for the bytes
its model reads per token on this card, the engine's own share of it (the engine's efficiency row), and the causes
in that engine's terms: Ollama's partial offload (size_vram below size) with num_ctx / OLLAMA_KV_CACHE_TYPE /
OLLAMA_FLASH_ATTENTION, vLLM's arguments, llama-server's flags. A server that could not be asked gets no
attribution: its outcome is the finding."""

from __future__ import annotations

from doctor.engines import adapter
from doctor.engines.base import FixVocabulary
from doctor.knowledge.engine_efficiency import efficiency, family
from doctor.model.engine_probe import ServerProbe
from doctor.model.engine_verdict import EngineVerdict
from doctor.model.ids import CauseId, Engine
from doctor.model.units import human_bytes

OLLAMA_PS = "https://github.com/ollama/ollama/blob/main/docs/api.md#list-running-models (size, size_vram)"
OLLAMA_FAQ = "https://github.com/ollama/ollama/blob/main/docs/faq.md"
IN_VRAM = 0.98  # size_vram at least this share of size: the whole model is on the GPU (Ollama rounds its estimates)


def attribute(sp: ServerProbe, engine: Engine | None, bandwidth_gbs: float | None, cc: str | None, fp16_slow: bool,
              model_bytes: int | None = None, why_no_ceiling: str = "") -> EngineVerdict:
    """The server's measured decode against the ceiling, in its engine's terms."""
    name = _name(sp)
    if sp.outcome != "ok" or not sp.median_tok_s:
        return EngineVerdict(sp.outcome, sp.error or f"{name} gave no result", engine=str(engine or sp.flavour))
    tok_s = sp.median_tok_s
    clock = "the server's own decode counters" if sp.clock == "server" else "the wall clock of its streamed tokens"
    base: dict = {"measured_tok_s": tok_s, "spread_pct": sp.spread_pct, "engine": str(engine or sp.flavour)}
    a = adapter(engine) if engine is not None else None
    v = a.vocabulary_for(sp.flavour) if a is not None else None
    causes: list[dict] = []
    if sp.resident_bytes and sp.vram_bytes is not None and sp.vram_bytes < IN_VRAM * sp.resident_bytes:
        share = sp.vram_bytes / sp.resident_bytes
        fix = _offload_fix(sp, v)
        causes.append({"cause": CauseId.CPU_OFFLOAD.value, "source": OLLAMA_PS, "fix": fix,
                       "text": f"partial offload: {share:.0%} of the loaded model in VRAM ({human_bytes(sp.vram_bytes)} of "
                               f"{human_bytes(sp.resident_bytes)}, as {name} reports it); the layers in host memory set "
                               "the speed"})
        return EngineVerdict("ok", f"{tok_s:g} tok/s with {share:.0%} of the model on the GPU ({clock}): the layers in host "
                             "memory set the speed, not the card", causes=tuple(causes), **base)
    weights = sp.model_bytes or model_bytes  # the server's own word on the model it runs first; --model's file else
    if not bandwidth_gbs or not cc or not weights:
        why = why_no_ceiling or ("the server does not say its model's size; give --model with the model's file or "
                                 "folder to judge it against the ceiling")
        return EngineVerdict("ok", f"{tok_s:g} tok/s measured ({clock}); no ceiling: {why}", **base)
    ceiling = bandwidth_gbs * 1e9 / weights
    eff = tok_s / ceiling
    try:
        expected, assumed = efficiency(a.efficiency_key if a is not None else "llama.cpp", family(cc, fp16_slow))
    except KeyError:
        return EngineVerdict("ok", f"{tok_s:g} tok/s = {eff:.0%} of the {ceiling:.1f} tok/s ceiling ({bandwidth_gbs:g} GB/s "
                             f"/ {weights / 1e9:.2f} GB per token, an estimate: the whole model read per token); no "
                             f"measured share for {name} on this card to compare with", ceiling_tok_s=round(ceiling, 1),
                             efficiency=round(eff, 3), **base)
    low = eff < expected.low
    text = (f"{name}: {eff:.0%} of the ceiling, " + ("below" if low else "as") + " what its engine reaches elsewhere on "
            f"this architecture ({expected.low:.0%}-{expected.high:.0%}{'; ' + assumed if assumed else ''})")
    cause: dict = {"cause": CauseId.UNEXPLAINED.value if low else "engine", "text": text, "source": expected.source}
    if low and v is not None and v.fast_decode:
        cause["fix"] = f"In {v.settings_live_in}: {v.fast_decode}" + (f"; then {v.restart}." if v.restart else ".")
    causes.append(cause)
    verdict = "below what its engine reaches elsewhere on this architecture" if low else \
        "as its engine does elsewhere on this architecture"
    return EngineVerdict("ok", f"{tok_s:g} tok/s = {eff:.0%} of the {ceiling:.1f} tok/s ceiling ({bandwidth_gbs:g} GB/s / "
                         f"{weights / 1e9:.2f} GB per token, the whole model read per token: an estimate), {verdict} "
                         f"({clock})", ceiling_tok_s=round(ceiling, 1), efficiency=round(eff, 3),
                         expected_efficiency=expected.mid, expected_source=expected.source, causes=tuple(causes),
                         **base)


def _name(sp: ServerProbe) -> str:
    return {"ollama": "Ollama", "llama-server": "llama-server", "vllm": "vLLM", "tabbyapi": "TabbyAPI",
            "lm-studio": "LM Studio"}.get(sp.flavour, "the server")


def _offload_fix(sp: ServerProbe, v: FixVocabulary | None) -> str:
    """Make room for the layers left on the CPU, in the engine's own settings (Ollama: num_ctx, its K/V cache type with
    flash attention, a smaller quant; forcing num_gpu above its choice can run out of memory)."""
    if v is None:
        return "Make room on the GPU: a shorter context or a smaller quant of the model."
    ctx = sp.n_ctx or int(sp.parameters.get("num_ctx", "0") or 0) or None
    shorter = v.context.format(n=max(2048, ctx // 2) if ctx else 4096)
    kv = f", a q8_0 K/V cache ({v.kv_cache.format(type='q8_0')})" if v.kv_cache else ""
    forced = sp.parameters.get("num_gpu")
    note = (f" The model's num_gpu {forced} caps the layers on the GPU: remove it to let the engine choose." if forced else
            f" Setting {v.gpu_layers.format(n='N')} above the engine's own choice can run out of memory." if v.gpu_layers else "")
    return (f"In {v.settings_live_in}: a shorter context ({shorter}){kv}, or {v.smaller_model}; "
            f"{v.restart or 'restart the server'}, and the GPU share (`ollama ps`) should reach 100%.{note}"
            if sp.flavour == "ollama" else
            f"In {v.settings_live_in}: a shorter context ({shorter}){kv}, or {v.smaller_model}; then "
            f"{v.restart or 'restart the server'}.{note}")
