"""The concurrency probe's verdict (`probe --streams`): does the server (or the engine the doctor drove: ExLlamaV2's
dynamic generator) batch concurrent streams, take them in turn, or fail under them? Judged from the measured rounds
alone, so a replay judges a saved probe the same way.

- batched: the total at the most streams is BATCHED x one stream's or more: each user pays a little speed for it.
  Each round is repeated until its totals settle (doctor/probe/streams.py repeated_round): the gain is the medians'
  ratio, and a gain whose totals reach no higher than one stream's own repeats did is inside the run-to-run spread,
  never called batched (the H200's 16-layer model, its jobs run one at a time, once read 1.21x from single rounds:
  benchmarks/results/issue38-streams/README.md).
- queued: the total stays within QUEUED of one stream's while the first token waits longer with each stream: the
  server runs one request at a time, the others wait (ExLlamaV2 driven unpaged: queued by construction, one cache
  page, whatever the totals' spread) ("slow" for a user is "queued" here). The fixes: the engine's
  own setting for parallel slots (llama-server --parallel N with -c N x the context per user, OLLAMA_NUM_PARALLEL=N),
  and ExLlamaV2's dynamic generator, which batches only with flash-attn (sm_80+; unpaged it takes one job at a time:
  https://github.com/turboderp-org/exllamav2/blob/master/exllamav2/generator/dynamic.py).
"""

from __future__ import annotations

from doctor.knowledge.arithmetic.decode_time import exl2_flash_attn
from doctor.knowledge.exl2_batching import paging_fix
from doctor.model.findings import Finding, Status
from doctor.model.ids import CheckId
from doctor.model.streams import StreamsProbe, StreamsRound

TITLE = "Concurrent streams"
BATCHED = 1.3  # total at N streams over one stream's: at or above, the server batches
QUEUED = 1.15  # at or below, it takes the streams in turn
PARALLEL_FIXES = ("llama-server: --parallel N -c <N x the context each user needs>",
                  "Ollama: OLLAMA_NUM_PARALLEL=N in the server's environment (its memory holds num_ctx x N)")


def _line(r: StreamsRound) -> str:
    return (f"{r.streams}: {r.total_tok_s:g} tok/s in total, {r.per_stream_tok_s:g} each (slowest {r.slowest_stream_tok_s:g}), "
            f"first token {r.ttft_median_s:g} s (max {r.ttft_max_s:g})" + (f", {r.failed} failed" if r.failed else "")
            + r.spread_said())


def within_spread(one: StreamsRound, top: StreamsRound) -> bool:
    """The most streams' totals reach no higher than one stream's own repeats did: whatever the medians' ratio, the
    gain is inside the run-to-run spread (a report from before repeats: its one total each, so only no gain is)."""
    return top.total_low <= one.total_high


def judge(probe: StreamsProbe) -> Finding:
    evidence = {"url": probe.url, "api": probe.api, "model": probe.model, "tokens_per_request": probe.tokens,
                "rounds": [_line(r) for r in probe.rounds]}
    good = [r for r in probe.rounds if r.total_tok_s > 0]
    if probe.driven:  # the doctor drove the engine itself: how it ran the jobs, and why (paged or not)
        evidence.update(engine=probe.engine, mode=probe.mode, mode_why=probe.mode_why,
                        context_per_stream=probe.context_per_stream, cache_mode=probe.cache_mode)
    if probe.error and not probe.rounds and (probe.bad_input or not probe.driven):  # the server named could not be
        evidence["input_error"] = probe.error  # asked, or a setting the engine refuses: the input to fix (exit 3),
        # as for --engine-url's timing probe (doctor/verdict/engine_probe.py)
    if probe.error and not good:
        return Finding(CheckId.CONCURRENCY, TITLE, Status.FAIL, f"the concurrency probe could not run: {probe.error}",
                       evidence)
    failed = [r for r in probe.rounds if r.failed]
    if failed:
        r = failed[0]
        errors = sorted({x.error for x in r.requests if x.error})
        return Finding(CheckId.CONCURRENCY, TITLE, Status.FAIL,
                       f"{r.failed} of {r.streams} concurrent streams failed: {errors[0] if errors else 'no text'}",
                       {**evidence, "errors": errors[:5]})
    one = next((r for r in good if r.streams == 1), None)
    top = max(good, key=lambda r: r.streams, default=None)
    if one is None or top is None or top.streams == 1:
        return Finding(CheckId.CONCURRENCY, TITLE, Status.INFO,
                       "measured: " + "; ".join(_line(r) for r in good) + " (give --streams 1,2,4 to judge batching)",
                       evidence)
    gain = top.total_tok_s / one.total_tok_s if one.total_tok_s else 0.0
    evidence["total_gain"] = round(gain, 2)
    if unsettled := [r.unsettled for r in good if r.unsettled]:
        evidence["unsettled"] = unsettled
    noise = within_spread(one, top)
    said = "; ".join(_line(r) for r in good)
    who = f"{probe.engine} ({probe.mode})" if probe.driven else "the server"
    # ExLlamaV2 unpaged holds one job's cache page: it runs the jobs one at a time by construction, so whatever the
    # totals' run-to-run spread says (a first round still warming, a host-bound model), the jobs queued
    unpaged = probe.driven and probe.mode == "unpaged"
    if gain >= BATCHED and not unpaged and not noise:
        return Finding(CheckId.CONCURRENCY, TITLE, Status.PASS,
                       f"{who} batches: {top.streams} streams give {gain:.2f}x one stream's total ({said})",
                       evidence)
    if gain <= QUEUED or unpaged:
        wait = (f"wait up to {top.ttft_max_s:g} s for their first token (one alone: {one.ttft_max_s:g} s)")
        return Finding(CheckId.CONCURRENCY, TITLE, Status.WARN,
                       (f"queued, not slow: {who} ran the {top.streams} jobs one at a time ({gain:.2f}x one stream's "
                        f"total); they {wait}: {probe.mode_why} ({said})") if unpaged else
                       (f"queued, not slow: {top.streams} streams give {gain:.2f}x one stream's total and {wait}; the "
                        f"server runs one request at a time ({said})"), evidence,
                       fix=_unpaged_fix(probe) if unpaged else
                       "give the server parallel slots (each holds its own context in memory); ExLlamaV2 (TabbyAPI) "
                       "batches only with flash-attn, on sm_80 and newer",
                       commands=(() if _can_page(probe) else PARALLEL_FIXES[:1]) if unpaged else PARALLEL_FIXES)
    if noise:
        return Finding(CheckId.CONCURRENCY, TITLE, Status.INFO,
                       f"no gain beyond the run-to-run spread: {top.streams} streams give {gain:.2f}x one stream's "
                       f"median total, but their totals ({top.total_low:g}-{top.total_high:g} tok/s) reach no higher "
                       f"than one stream's did ({one.total_low:g}-{one.total_high:g}): not shown to batch; more "
                       f"--runs, or a quieter card, would settle it ({said})", evidence)
    return Finding(CheckId.CONCURRENCY, TITLE, Status.INFO,
                   f"partly batched: {top.streams} streams give {gain:.2f}x one stream's total ({said})", evidence)


def _can_page(probe: StreamsProbe) -> bool:
    """The card the jobs ran on could run flash-attn 2 (sm_80+): installing it is the fix there."""
    major = probe.compute_capability.split(".")[0]
    return major.isdigit() and exl2_flash_attn(probe.compute_capability)


def _unpaged_fix(probe: StreamsProbe) -> str:
    """ExLlamaV2 ran unpaged: flash-attn where the card can run it, llama.cpp's slots where it cannot, both when the
    card is not known (a report from before compute_capability was kept)."""
    return paging_fix(_can_page(probe) if probe.compute_capability else None)
