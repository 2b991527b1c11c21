"""Each `probe --streams` round repeated until its totals settle, by the timing probe's rule (doctor/probe/more_runs.py):
more repeats while they spread, a round that never settles says so, the figures are medians, a gain inside the
run-to-run spread is never called batched, and a report from before repeats replays as it did."""

from __future__ import annotations

from serving_support import FakeEngine

from doctor.model.findings import Status
from doctor.model.probe_results import ProbeReport
from doctor.model.serialize import from_jsonable, to_jsonable
from doctor.model.streams import StreamsProbe, StreamsRound, StreamTiming
from doctor.probe.more_runs import MAX_FACTOR
from doctor.probe.streams import StreamsOptions, combine_repeats, probe_streams, repeated_round
from doctor.render.verdict_text import streams_lines
from doctor.verdict.streams import judge


def one(streams: int, total: float, ttft: float = 0.1, failed: int = 0) -> StreamsRound:
    timing = StreamTiming(30, ttft, 1.0, "HTTP 503" if failed else "")
    return StreamsRound(streams, (timing,) * streams, total, round(total / streams, 2), round(total / streams, 2),
                        ttft, ttft, failed=failed)


def feed(rounds: list[StreamsRound]):
    left = iter(rounds)
    return lambda: next(left)


def test_a_round_is_repeated_until_its_last_runs_agree():
    totals = [100.0, 150.0, 102.0, 101.0, 100.0, 999.0]
    r = repeated_round(feed([one(1, t) for t in totals]), runs=3, settle_pct=3.0, budget_s=60)
    assert r.repeats == 5 and r.totals_tok_s == (100.0, 150.0, 102.0, 101.0, 100.0) and r.window == 3
    assert r.total_tok_s == 101.0 and (r.total_low, r.total_high) == (100.0, 102.0) and r.spread_pct == 2.0
    assert not r.unsettled and r.spread_said() == " (median of 3 of 5 repeats, totals 100-102)"


def test_a_round_that_never_settles_says_so_with_its_spread():
    swinging = [one(2, 100.0 if i % 2 else 150.0) for i in range(30)]
    r = repeated_round(feed(swinging), runs=3, settle_pct=3.0, budget_s=600)
    assert r.repeats == MAX_FACTOR * 3 and r.window == 3  # the cap, as the timing probe's runs
    assert "2-stream totals did not settle: the last 3 of 9 repeats spread" in r.unsettled and "100-150" in r.unsettled
    assert r.spread_said().endswith(", unsettled)")
    quick = repeated_round(feed(swinging), runs=3, settle_pct=3.0, budget_s=0)  # no time for more: the runs asked
    assert quick.repeats == 3 and quick.unsettled
    lines = streams_lines(ProbeReport(status="ok", summary="", streams=StreamsProbe("http://x", "/v1/completions",
                                                                                     "m", 30, (r,))))
    assert any("unsettled: the 2-stream totals did not settle" in x for x in lines)


def test_the_figures_are_medians_over_the_kept_repeats_not_the_last_one():
    reps = [one(4, 300.0, ttft=0.9), one(4, 200.0, ttft=0.2), one(4, 400.0, ttft=0.5)]
    r = combine_repeats(reps, runs=3, settle_pct=100.0)
    assert r.total_tok_s == 300.0 and r.per_stream_tok_s == 75.0 and r.ttft_median_s == 0.5 and r.ttft_max_s == 0.5
    assert r.requests == reps[0].requests and not r.unsettled  # the requests of the median repeat


def test_a_repeat_that_fails_ends_the_round_as_its_result():
    r = repeated_round(feed([one(2, 100.0), one(2, 0.0, failed=2), one(2, 100.0)]), runs=3, settle_pct=3.0, budget_s=60)
    assert r.failed == 2 and r.repeats == 2 and r.totals_tok_s == (100.0, 0.0)
    assert judge(StreamsProbe("http://x", "/v1/completions", "m", 30, (one(1, 50.0), r))).status is Status.FAIL


def probe_of(*rounds: StreamsRound) -> StreamsProbe:
    return StreamsProbe("http://x", "/v1/completions", "m", 30, rounds)


def test_a_gain_inside_the_spread_is_not_called_batched():
    # the H200's 16-layer fp16 case: one job 263 tok/s and later 340, two jobs (run one at a time) ~325
    single = combine_repeats([one(1, 263.0), one(1, 340.0), one(1, 270.0)], runs=3)
    two = combine_repeats([one(2, 325.0), one(2, 330.0), one(2, 328.0)], runs=3)
    f = judge(probe_of(single, two))
    assert f.evidence["total_gain"] == 1.21 and f.status is Status.INFO
    assert f.summary.startswith("no gain beyond the run-to-run spread") and "partly batched" not in f.summary
    assert "325-330" in f.summary and "263-340" in f.summary and f.evidence["unsettled"]
    wide = combine_repeats([one(1, 250.0), one(1, 400.0), one(1, 260.0)], runs=3)
    four = combine_repeats([one(4, 340.0), one(4, 345.0), one(4, 350.0)], runs=3)
    assert judge(probe_of(wide, four)).evidence["total_gain"] >= 1.3
    assert judge(probe_of(wide, four)).status is Status.INFO  # 1.33x on medians, but inside one stream's spread
    tight = combine_repeats([one(1, 259.0), one(1, 260.0), one(1, 261.0)], runs=3)
    assert judge(probe_of(tight, four)).status is Status.PASS  # the same medians, settled: batched
    tight_two = combine_repeats([one(2, 320.0), one(2, 321.0), one(2, 322.0)], runs=3)
    assert judge(probe_of(tight, tight_two)).summary.startswith("partly batched")  # outside the spread: partly


OLD_ROUND = {"streams": 1, "requests": [{"tokens": 30, "ttft_s": 0.1, "end_s": 1.0, "error": ""}], "total_tok_s": 100.0,
             "per_stream_tok_s": 100.0, "slowest_stream_tok_s": 100.0, "ttft_median_s": 0.1, "ttft_max_s": 0.1,
             "failed": 0}


def test_a_report_from_before_repeats_replays_unchanged():
    old = {"url": "http://x", "api": "/v1/completions", "model": "m", "tokens": 30,
           "rounds": [OLD_ROUND, {**OLD_ROUND, "streams": 4, "total_tok_s": 200.0, "per_stream_tok_s": 50.0}]}
    probe = from_jsonable(StreamsProbe, old, "$")
    assert all(r.repeats == 1 and r.totals_tok_s == () and r.spread_said() == "" for r in probe.rounds)
    f = judge(probe)
    assert f.status is Status.PASS and f.summary == (
        "the server batches: 4 streams give 2.00x one stream's total (1: 100 tok/s in total, 100 each (slowest 100), "
        "first token 0.1 s (max 0.1); 4: 200 tok/s in total, 50 each (slowest 100), first token 0.1 s (max 0.1))")
    flat = from_jsonable(StreamsProbe, {**old, "rounds": [OLD_ROUND, {**OLD_ROUND, "streams": 2, "total_tok_s": 125.0}]},
                         "$")
    assert judge(flat).summary.startswith("partly batched: 2 streams give 1.25x")  # as before: one total each
    assert "unsettled" not in f.evidence and "repeats" not in " ".join(streams_lines(
        ProbeReport(status="ok", summary="", streams=probe)))
    assert from_jsonable(StreamsProbe, to_jsonable(probe), "$") == probe


def test_a_server_s_rounds_are_repeated():
    with FakeEngine(batched=True, step_s=0.01) as server:
        probe = probe_streams(server.url, StreamsOptions((1, 2), tokens=16, runs=2, settle_pct=50.0))
    assert [r.streams for r in probe.rounds] == [1, 2] and not probe.error
    assert all(r.repeats >= 2 and len(r.totals_tok_s) == r.repeats and r.window == 2 for r in probe.rounds)
    assert all(r.total_low <= r.total_tok_s <= r.total_high for r in probe.rounds)
