"""`probe --streams` in ExLlamaV2 itself: the probe's child runs ExLlamaV2's dynamic generator (what TabbyAPI
serves with) with N jobs enqueued together per round, and times each job's first and last token.

Run as `python -m doctor.probe.exl2_streams` with a ProbeSpec (its `streams` set) as JSON on stdin; it speaks the
probe worker's protocol (doctor/probe/worker.py: the same import and JIT-build, load and error kinds), phases
import (build) -> load -> then per round warmup -> streams (repeated until its totals settle, as the timing probe's
runs: spec.runs, settle_pct, settle_budget_s), each round's figures a `sample` event (so a probe
stopped half-way keeps the rounds it finished) and the whole StreamsProbe the `result`.

Paged or not is ExLlamaV2 0.3.2's own rule (https://github.com/turboderp-org/exllamav2/blob/v0.3.2/exllamav2/
generator/dynamic.py, attn.py): paged mode calls assert_paged_attn(), true only when flash-attn 2.5.7+ imported
(attn.has_flash_attn_with_paged), and refuses a model config with no_flash_attn; flash-attn itself runs only on
sm_80 and newer (attn.py warns and carries on below that). Unpaged, "the max supported batch size is 1": one cache
page of max_seq_len, so the jobs take turns. The cache: paged, N x the context per stream (one round's jobs all
fit); unpaged, one context. The generator refuses ExLlamaV2Cache_8bit (the fp8 mode: "Dynamic generator does not
currently work with 8-bit cache. Use either FP16 or Q4."); the Q4/Q6/Q8 caches (ExLlamaV2Cache_Q) it takes.
"""

from __future__ import annotations

import gc
import importlib.util
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from doctor.knowledge.arithmetic.decode_time import exl2_flash_attn
from doctor.knowledge.exl2_batching import DYNAMIC_PY, PAGED_SINCE, TAKE_TURNS
from doctor.knowledge.kv_cache import KV_CACHE_MODES
from doctor.knowledge.signatures import probe_failure_kind
from doctor.model.ids import FailureKind
from doctor.model.serialize import to_jsonable
from doctor.model.streams import StreamsProbe, StreamsRound, StreamTiming
from doctor.probe.streams import repeated_round, summarize_round
from doctor.probe.worker import Worker, main

PAGE = 256  # PAGED_PAGE_SIZE: the cache's length must be a multiple of it, paged or not (dynamic.py)
REFUSED_CACHES = {"fp8": "ExLlamaV2Cache_8bit"}  # dynamic.py: "does not currently work with 8-bit cache"


def pages(tokens: int) -> int:
    """`tokens` rounded up to whole cache pages."""
    return -(-tokens // PAGE) * PAGE


def paged_mode(cc: tuple[int, int], has_paged_attn: bool, no_flash_attn: bool, flash_attn_installed: bool,
               env: dict[str, str] | os._Environ = os.environ) -> tuple[bool, str]:
    """(paged, why): ExLlamaV2's own conditions for paged mode, the card's first (flash-attn needs sm_80+)."""
    sm = f"sm_{cc[0]}{cc[1]}"
    if not exl2_flash_attn(f"{cc[0]}.{cc[1]}"):
        return False, f"this card is {sm} and flash-attn (paged attention) needs sm_80 or newer; {TAKE_TURNS}"
    if "EXLLAMA_NO_FLASH_ATTN" in env:
        return False, f"EXLLAMA_NO_FLASH_ATTN is set, so ExLlamaV2 does not use flash-attn; {TAKE_TURNS}"
    if not has_paged_attn:
        what = (f"flash-attn is installed but older than {PAGED_SINCE}, the first with paged attention" if flash_attn_installed
                else "flash-attn is not installed")
        return False, f"{what} ({sm} could page with it); {TAKE_TURNS}"
    if no_flash_attn:
        return False, f"the model's config disables flash-attn (no_flash_attn); {TAKE_TURNS}"
    return True, (f"flash-attn with paged attention on {sm}: the dynamic generator batches the jobs, its cache "
                  "sized for all of them")


class StreamsWorker(Worker):
    """The probe worker's import, load and failure handling, then rounds of concurrent jobs instead of one stream."""

    def outcome(self) -> tuple[str, Any]:
        probe = self.streams()
        return f"{probe.mode}: " + "; ".join(f"{r.streams}: {r.total_tok_s:g} tok/s" for r in probe.rounds), probe

    def streams(self) -> StreamsProbe:
        spec = self.spec
        torch, exl = self.import_engine()
        if spec.cache_mode not in KV_CACHE_MODES:
            raise self.fail(FailureKind.BAD_SPEC, f"unknown cache mode {spec.cache_mode!r}")
        if spec.cache_mode in REFUSED_CACHES:
            raise self.fail(FailureKind.BAD_SPEC, f"--cache-mode {spec.cache_mode}: ExLlamaV2's dynamic generator "
                            f"refuses {REFUSED_CACHES[spec.cache_mode]} ('Dynamic generator does not currently work "
                            f"with 8-bit cache', {DYNAMIC_PY}); give --cache-mode q8, q6, q4 or fp16")
        if not spec.streams:
            raise self.fail(FailureKind.BAD_SPEC, "no stream counts given")
        if not Path(spec.model_path).is_dir():
            raise self.fail(FailureKind.MODEL_LOAD, f"{spec.model_path}: not a directory")
        from exllamav2 import attn as xattn  # lazy: after the import phase found ExLlamaV2 (and built it)
        from exllamav2.generator import ExLlamaV2DynamicGenerator, ExLlamaV2DynamicJob, ExLlamaV2Sampler  # lazy: as attn

        config = self.config(exl)
        if config.max_seq_len % PAGE:  # the generator asserts a whole number of pages
            self.warnings.append(f"max_seq_len {config.max_seq_len} rounded up to {pages(config.max_seq_len)}, "
                                 f"whole cache pages of {PAGE} tokens")
            config.max_seq_len = pages(config.max_seq_len)
        ctx = int(config.max_seq_len)
        props = torch.cuda.get_device_properties(0)
        paged, why = paged_mode((props.major, props.minor), bool(getattr(xattn, "has_flash_attn_with_paged", False)),
                                bool(getattr(config, "no_flash_attn", False)),
                                importlib.util.find_spec("flash_attn") is not None)
        engine = f"exllamav2 {getattr(exl, '__version__', '?')}"
        self.em.emit("mode", engine=engine, mode="paged" if paged else "unpaged", mode_why=why,
                     context_per_stream=ctx, cache_mode=spec.cache_mode, compute_capability=f"{props.major}.{props.minor}")
        model, cache, _ = self.load(torch, exl, config, cache_len=ctx)
        tokenizer = exl.ExLlamaV2Tokenizer(config)
        ids = self.prompt(torch, exl, config)
        vocab = min(tokenizer.get_vocab_size(), config.vocab_size)
        greedy = ExLlamaV2Sampler.Settings.greedy()
        warm_tokens = max(spec.warmup_tokens, spec.tokens + 8)  # the timed lengths are lengths the warm-up met
        rounds: list[StreamsRound] = []
        error, held = "", ctx
        seen = 0  # jobs started so far: each job's prompt starts with its own token (no cached pages reused)
        started = time.perf_counter()
        for index, n in enumerate(spec.streams):
            want = pages(n * ctx) if paged else ctx
            try:
                if want != held:  # paged: room for this round's N whole contexts, in place of the last round's
                    cache = None
                    gc.collect()
                    torch.cuda.empty_cache()
                    cache = getattr(exl, KV_CACHE_MODES[spec.cache_mode].exllamav2_class)(model, max_seq_len=want)
                    held = want
                gen = ExLlamaV2DynamicGenerator(model=model, cache=cache, tokenizer=tokenizer, max_batch_size=n,
                                                paged=paged)
                warm_jobs = n if paged else 1  # unpaged every step is one job's: one job warms that shape
                self.phase("warmup", f"warm-up: {warm_jobs} job{'s' if warm_jobs > 1 else ''} of {warm_tokens} tokens "
                           f"(ExLlamaV2 autotunes its kernels over the first ~200 calls of each batch shape)",
                           warm_tokens)
                self._round(gen, ExLlamaV2DynamicJob, greedy, ids, vocab, warm_jobs, warm_tokens, seen)
                seen += warm_jobs
                repeat = 0

                def once(n: int = n, want: int = want, gen: Any = gen) -> StreamsRound:
                    nonlocal seen, repeat
                    repeat += 1
                    self.phase("streams", f"{n} concurrent job{'s' if n > 1 else ''} of {spec.tokens} tokens "
                               f"({'paged' if paged else 'unpaged: one at a time'}, cache {want} tokens), repeat "
                               f"{repeat}", n * spec.tokens)
                    done = self._round(gen, ExLlamaV2DynamicJob, greedy, ids, vocab, n, spec.tokens, seen)
                    seen += n
                    return summarize_round(n, done)

                result = repeated_round(once, spec.runs, spec.settle_pct, spec.settle_budget_s, time.perf_counter)
                del gen
            except Exception as exc:  # noqa: BLE001 - a round that fails is that round's error; earlier ones stand
                text = f"{type(exc).__name__}: {exc}"
                kind = probe_failure_kind(text)
                first = text.splitlines()[0][:300] if text.strip() else type(exc).__name__
                what = (f"out of GPU memory at {n} streams (cache {want} tokens, {spec.cache_mode}): {first}"
                        if kind == FailureKind.OOM else f"{n} streams failed: {first}")
                traceback.print_exc()  # to the log (stderr): the round's one line is its error
                rounds.append(StreamsRound(n, tuple(StreamTiming(0, 0.0, 0.0, what) for _ in range(n)),
                                           0.0, 0.0, 0.0, 0.0, 0.0, failed=n))
                self._round_event(rounds[-1])
                rest = spec.streams[index + 1:]
                error = what + (f"; not run: {', '.join(map(str, rest))} streams" if rest else "")
                break
            rounds.append(result)
            self._round_event(rounds[-1])
        self.phase("done", "probe finished")
        return StreamsProbe(url="", api="", model=spec.label or spec.model_path, tokens=spec.tokens,
                            rounds=tuple(rounds), error=error, seconds=round(time.perf_counter() - started, 2),
                            engine=engine, mode="paged" if paged else "unpaged", mode_why=why,
                            context_per_stream=ctx, cache_mode=spec.cache_mode,
                            compute_capability=f"{props.major}.{props.minor}")

    def _round(self, gen: Any, job_cls: Any, settings: Any, ids: Any, vocab: int, n: int, tokens: int,
               offset: int) -> tuple[StreamTiming, ...]:
        """`n` jobs of `tokens` each, enqueued together and iterated to the end; each job's first and last token's
        time after the enqueue. Each prompt starts with its own token, so no job reuses another's cached pages (a
        team's prompts differ)."""
        jobs = []
        for i in range(n):
            own = ids.clone()
            own[0, 0] = (int(ids[0, 0]) + offset + i + 1) % vocab
            jobs.append(job_cls(input_ids=own, max_new_tokens=tokens, gen_settings=settings, identifier=i,
                                stop_conditions=None))
        first: list[float | None] = [None] * n
        last: list[float | None] = [None] * n
        count = [0] * n
        t0 = time.perf_counter()
        gen.enqueue(jobs)
        while gen.num_remaining_jobs():
            results = gen.iterate()
            now = time.perf_counter()
            for r in results:
                if r.get("stage") != "streaming":
                    continue
                i = r.get("identifier")
                ids_out = r.get("token_ids")
                got = int(ids_out.shape[-1]) if ids_out is not None else (1 if r.get("text") else 0)
                if not isinstance(i, int) or not got:
                    continue
                count[i] += got
                first[i] = now if first[i] is None else first[i]
                last[i] = now
        return tuple(StreamTiming(count[i], round((first[i] or t0) - t0, 4), round((last[i] or t0) - t0, 4),
                                  "" if count[i] else "the job produced no tokens") for i in range(n))

    def _round_event(self, r: StreamsRound) -> None:
        self.em.emit("sample", phase="streams", streams=r.streams, tok_s=r.total_tok_s, round=to_jsonable(r))


if __name__ == "__main__":
    sys.exit(main(StreamsWorker))
