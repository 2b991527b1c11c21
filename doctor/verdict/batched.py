"""Batched decode for the report's model: how fast 1, 2, 4, 8 ... users would see it on the card(s) in force, with
the engine in force, its cache and its context (an estimate; Report.batched_decode).

The physics is the plan's (doctor/plan/concurrency.py on a plan row, doctor/plan/rows.py): the report's model becomes
one plan option, judged on the card(s) the model checks judge (checks/model/card.py), at the context and cache the
memory checks use (ExLlamaV2: --max-seq-len or the model's default; llama.cpp and Ollama: the launch's -c or
llama-server's default, checks/engine/gguf_fit.py). What the plan assumes from the card's cc, this reads from the
facts: ExLlamaV2 batches only in paged mode, which needs flash-attn 2.5.7+ installed and able to run on the card
(its README, "New in v0.1.0"); without it the dynamic generator runs unpaged, "the max supported batch size is 1"
(exllamav2/generator/dynamic.py's docstring), and the streams take turns.

Unknown(reason) wherever the model, the card or the engine's batching is not known: never a made-up figure.
"""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

from checks.base import CheckContext
from checks.engine.gguf_fit import option_for
from checks.model.card import card_for
from checks.model.memory_budget import seq_len_for
from doctor.engines import adapter
from doctor.knowledge.arithmetic.decode_time import exl2_flash_attn
from doctor.knowledge.arithmetic.model_bytes import ArithmeticUnavailable, dims
from doctor.knowledge.attention import flash_attn_generation, flash_attn_supports
from doctor.knowledge.exl2_batching import EXL2_README, PAGED_SINCE, paging_fix
from doctor.knowledge.gpus import GpuSpec, spec_for_name
from doctor.model.batched import NO_MODEL, BatchedDecode
from doctor.model.engines import InForce
from doctor.model.facts import Facts
from doctor.model.gguf import GgufShape
from doctor.model.ids import Engine
from doctor.model.model_dir import ModelConfig, ModelFacts
from doctor.model.plan import Plan
from doctor.model.probe_results import ProbeReport
from doctor.model.quant_plan import QuantCandidate, StreamsEstimate
from doctor.model.range import Range
from doctor.model.unknown import Unknown, known
from doctor.model.verdict import Verdict
from doctor.plan.concurrency import IN_TURN, QUEUED_UP_TO, batches, with_concurrency
from doctor.plan.rows import Setting, arithmetic, caches, row
from doctor.verdict.build import gpu_spec

TABBY_CONFIG = "https://github.com/theroyallab/tabbyAPI/blob/main/common/config_models.py"
MID_CONVERSATION = "speeds with half of each stream's context in the cache"
IDLE_MEMORY = ("the cache's room: the idle card's memory as NVML reports it on that model (the plan's budget), "
               "not the free VRAM measured now")


def batched_decode(facts: Facts, plan: Plan, engine: InForce) -> BatchedDecode | Unknown:
    """The report's model at 1, 2, 4, 8 ... streams, or why it cannot be estimated; a bug here is said, not raised
    (the report's checks and verdict stand without it)."""
    try:
        return _estimate(facts, plan, engine)
    except Exception as exc:  # noqa: BLE001 - an estimate that fails must not cost the user the report
        return Unknown(f"the estimate failed: {type(exc).__name__}: {exc} (a bug; please report it)")


def _estimate(facts: Facts, plan: Plan, engine: InForce) -> BatchedDecode | Unknown:
    m = facts.model
    if m is None:
        return Unknown(NO_MODEL)
    if not m.exists or (m.problem and m.config is None and m.gguf is None):
        return Unknown(f"the model could not be read ({m.problem or 'not found'})")
    ctx = CheckContext(facts, plan)
    card = card_for(ctx)
    if card is None:
        return Unknown("no GPU here and no --target-gpu: the speed is the card's")
    specs = _specs(card.rooms, card.spec)
    if specs is None:
        return Unknown(f"{card.name} is not in the knowledge base, so its bandwidth is not known (v100-doctor --list-gpus)")
    option = _option(m)
    if isinstance(option, Unknown):
        return option
    candidate, config = option
    name = _plan_engine(engine.engine, candidate)
    if isinstance(name, Unknown):
        return name
    try:
        shape = dims(config)
    except ArithmeticUnavailable as exc:
        return Unknown(f"the model's shape is not known well enough: {exc}")
    context, cache, assumed = _context_and_cache(ctx, name, config)
    if cache not in caches(name):
        return Unknown(f"the {cache} cache is not one the plan's arithmetic knows for {name} ({', '.join(caches(name))})")
    fa, attention = _flash_attn(facts, plan, name, specs)
    setting = Setting(config, shape, specs, exl2_flash_attn=fa)
    r = with_concurrency(setting, row(setting, candidate, specs, cache, context, _row_engine(name), longest=False))
    where = " + ".join(g.key for g in specs)
    if not r.fits:
        return Unknown(f"{candidate.label} with the {cache} cache at {context} tokens does not fit {where} "
                       f"({r.why_not}): no stream to estimate")
    if not r.concurrency:
        return Unknown(f"{candidate.label} on {where}: the cache holds no stream of {context} tokens")
    on_turns = not batches(setting, r)
    return BatchedDecode(engine=name, option=candidate.label, cards=tuple(g.key for g in specs), cache=cache,
                         context=context, batches=not on_turns, attention=attention, entries=r.concurrency,
                         knee=r.knee, source=r.concurrency_source, basis=MID_CONVERSATION,
                         serve=_serve(name, r.concurrency, r.knee, on_turns, specs),
                         assumed=tuple(assumed) + (IDLE_MEMORY,))


def measured_in_turn(current: BatchedDecode | Unknown | None, probe: ProbeReport, verdict: Verdict, facts: Facts,
                     plan: Plan) -> BatchedDecode | Unknown | None:
    """A report whose model is known only through ExLlamaV2's probe (a recorded example, `probe --synthetic`): where
    the facts show it cannot run paged here, its streams take turns, so the ladder is the measured speed shared out
    (no shape is needed); where it would batch, the batched speed needs config.json, and the report says so."""
    r = probe.result
    if not (isinstance(current, Unknown) and current.reason == NO_MODEL) or r is None or not verdict.measured_tok_s:
        return current
    if not r.engine.startswith("exllamav2") or r.shape.format not in ("exl2", "gptq"):
        return current  # another engine's measurement (Transformers + bitsandbytes): its serving is not estimated
    spec = gpu_spec(r, facts, plan)
    if spec is None:
        return Unknown(f"{r.device_name} is not in the knowledge base (v100-doctor --list-gpus)")
    fa, attention = _flash_attn(facts, plan, "exllamav2", (spec,))
    if fa is not False:
        return Unknown(f"ExLlamaV2 batches here ({attention}); the probe measured one stream, and the batched speed "
                       "needs the model's config.json: give --model DIR")
    mid, spread = verdict.measured_tok_s, verdict.spread_pct / 100
    one = Range(round(mid * (1 - spread), 1), round(mid, 1), round(mid * (1 + spread), 1))
    entries = tuple(StreamsEstimate(n, r.max_seq_len, one, Range(*(round(x / n, 1) for x in (one.low, one.mid, one.high))))
                    for n in (1, 2, 4, 8) if n <= QUEUED_UP_TO)
    shape = r.shape
    bpw = shape.bpw if known(shape.bpw) else None
    option = f"{shape.format.upper()} {bpw:g} bpw" if bpw else shape.format.upper()
    return BatchedDecode(engine="exllamav2", option=option, cards=(spec.key,), cache=r.cache_mode, context=r.max_seq_len,
                         batches=False, attention=attention, entries=entries, knee=1,
                         source=f"{IN_TURN}; one stream's speed is the probe's, its range the runs' spread",
                         basis=f"one stream as the probe measured it, {r.context_tokens} tokens in the cache",
                         serve=_serve("exllamav2", entries, 1, True, (spec,)))


def _specs(rooms: tuple, first: GpuSpec | None) -> tuple[GpuSpec, ...] | None:
    """The knowledge base's row for each GPU the model checks judge; None when one of them has none."""
    if first is None:
        return None
    if len(rooms) < 2:
        return (first,)
    specs = tuple(spec_for_name(r.name, r.total_mib) if r.measured else first for r in rooms)
    return None if any(s is None for s in specs) else tuple(s for s in specs if s is not None)


def _option(m: ModelFacts) -> tuple[QuantCandidate, ModelConfig] | Unknown:
    """The model as a plan option (its version) and its shape: a GGUF's from its header, else config.json's."""
    if m.gguf is not None:
        g = m.gguf
        if g.shape is None or g.weights is None:
            return Unknown("the GGUF header has no decoder shape or tensor infos to estimate from")
        kind = g.file_type if known(g.file_type) else None
        label = f"GGUF {kind}" if kind else "GGUF"
        return (QuantCandidate("gguf", label, None, filename=g.path, gguf_type=kind, download_bytes=g.weights.total_bytes,
                               found="local"), config_of(g.shape, g.weights.tied_output))
    q, config = m.quant, m.config
    if config is None:
        return Unknown(f"the model's config.json was not read{': ' + m.config_problem if m.config_problem else ''}")
    if q is None or q.method not in ("exl2", "gptq"):
        return Unknown(f"batched decode is estimated for EXL2, GPTQ and GGUF versions; this model is "
                       f"{q.method if q is not None else 'of an unknown format'}")
    bits = q.bits if known(q.bits) else None
    if bits is None:
        return Unknown(f"the model's bits per weight are not declared ({q.bits})")
    group = q.group_size if known(q.group_size) else None
    label = f"EXL2 {bits:g} bpw" if q.method == "exl2" else f"GPTQ {bits:g}-bit"
    return QuantCandidate(q.method, label, None, bpw=float(bits), group_size=group, filename=m.path, found="local"), config


def config_of(s: GgufShape, tied: bool) -> ModelConfig:
    """The decoder's shape as config.json would give it, from a GGUF header's keys."""
    moe = s.n_expert > 1
    return ModelConfig(architecture=s.architecture, model_type=s.architecture, num_hidden_layers=s.n_layer,
                       hidden_size=s.n_embd, num_attention_heads=s.n_head, num_key_value_heads=s.n_head_kv,
                       head_dim=s.head_dim_k, intermediate_size=s.n_ff, vocab_size=s.n_vocab, tie_word_embeddings=tied,
                       max_position_embeddings=s.context_length or Unknown("not in the GGUF header"),
                       num_experts=s.n_expert if moe else Unknown("dense"),
                       num_experts_per_tok=(s.n_expert_used or 1) if moe else Unknown("dense"),
                       moe_intermediate_size=(s.n_ff_exp or s.n_ff) if moe else Unknown("dense"),
                       shared_expert_intermediate_size=(s.n_ff_shexp or s.n_expert_shared * (s.n_ff_exp or s.n_ff))
                       if moe else Unknown("dense"),
                       moe_layers=s.n_layer - s.n_leading_dense if moe else Unknown("dense"))


def _plan_engine(engine: Engine, c: QuantCandidate) -> str | Unknown:
    """The plan's engine whose rows and batching stand for the engine in force (TabbyAPI runs ExLlamaV2 for EXL2)."""
    name = "exllamav2" if engine == Engine.TABBYAPI and c.fmt in ("exl2", "gptq") else str(engine)
    a = adapter(name)
    if a.plan is None or not a.plan.batched:
        return Unknown(f"batched decode is estimated for ExLlamaV2 (TabbyAPI), llama.cpp and Ollama; {a.label}'s "
                       "is not modelled here")
    if not adapter(_row_engine(name)).plan_takes(c):
        return Unknown(f"{a.label} does not load {c.label}")
    return name


def _row_engine(name: str) -> str:
    """The plan engine whose row is computed: Ollama's rows are llama.cpp's (its kernels and buffers; the plan's
    Ollama rows take only the Hub's GGUF files, which `ollama pull` can name)."""
    return "llama.cpp" if arithmetic(name) == "llama.cpp" else name


def _context_and_cache(ctx: CheckContext, engine: str, config: ModelConfig) -> tuple[int, str, list[str]]:
    """Each stream's context and the cache type, as the memory checks take them, and what was assumed."""
    if arithmetic(engine) == "llama.cpp":
        option, assumed = option_for(ctx)
        return option.n_ctx, option.cache_type_k, [a for a in assumed if a.startswith("context")]
    seq, source = seq_len_for(ctx, config.max_position_embeddings)
    return seq, ctx.plan.cache_mode, [] if source == "--max-seq-len" else [f"context {seq}: {source}"]


def _flash_attn(facts: Facts, plan: Plan, engine: str, specs: tuple[GpuSpec, ...]) -> tuple[bool | None, str]:
    """Whether ExLlamaV2 runs paged (batching) here, and why, from the facts: flash-attn 2.5.7+ installed, able to run
    on every card, not switched off. A --target-gpu is a plan: as TabbyAPI installs it (flash-attn on sm_80+)."""
    if arithmetic(engine) != "exllamav2":
        return None, ""  # llama.cpp batches the streams of its parallel slots whatever the attention
    ccs = sorted({g.cc for g in specs})
    sm = "/".join(f"sm_{c.replace('.', '')}" for c in ccs)
    if plan.target_gpu:
        runs = all(exl2_flash_attn(c) for c in ccs)
        return None, (f"planning for {specs[0].name}: flash-attn as TabbyAPI installs it, "
                      + ("which runs there: paged, batched" if runs else f"which does not run on {sm}: unpaged"))
    version = facts.python.packages.get("flash-attn", Unknown("not gathered"))
    if not known(version):
        why = version.reason if isinstance(version, Unknown) else "unknown"
        return False, "flash-attn is not installed" + ("" if why == "not installed" else f" ({why})")
    gen = flash_attn_generation(str(version))
    if gen is None or not all(flash_attn_supports(gen, c) for c in ccs):
        return False, f"flash-attn {version} is installed but cannot run on {sm}"
    if facts.python.env.get("EXLLAMA_NO_FLASH_ATTN"):
        return False, f"flash-attn {version} is installed but EXLLAMA_NO_FLASH_ATTN is set"
    try:
        paged = Version(str(version)) >= Version(PAGED_SINCE)
    except InvalidVersion:
        paged = False
    if not paged:
        return False, f"flash-attn {version} is installed, older than the {PAGED_SINCE} paged mode needs ({EXL2_README})"
    return True, f"flash-attn {version} is installed and runs on {sm}: paged, batched ({EXL2_README})"


def _serve(engine: str, entries: tuple[StreamsEstimate, ...], knee: int, on_turns: bool,
           specs: tuple[GpuSpec, ...]) -> tuple[str, ...]:
    """The engine's own settings for serving the knee's streams (words to read, not commands the doctor runs)."""
    at = next((e for e in entries if e.streams == knee), entries[0])
    n, per = at.streams, at.context_per_stream
    if arithmetic(engine) == "llama.cpp":
        slots = f"llama-server --parallel {n} -c {n * per} (each of the {n} slots gets -c / {n} = {per} tokens)"
        ollama = (f"Ollama: OLLAMA_NUM_PARALLEL={n} in the server's environment and num_ctx {per} (its memory holds "
                  f"num_ctx x {n})")
        return (ollama,) if engine == "ollama" else (slots,)
    if on_turns:
        return (paging_fix(all(exl2_flash_attn(g.cc) for g in specs)),)
    return (f"TabbyAPI: cache_size: {n * per} (max_seq_len: {per}) holds {n} streams of {per} tokens ({TABBY_CONFIG})",)
