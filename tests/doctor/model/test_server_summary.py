"""An engine server's counters over the window: tokens served per interval (llama-server's running requests counted
from /slots, since its counter moves only when a request ends), idle stretches merged, the GPU's figures beside each
interval, the report's timeline and the live line's figures."""

from __future__ import annotations

from doctor.model.samples import GpuSample, GpuSeries, SampleSeries, ServerSample, ServerSeries
from doctor.model.server_summary import generated, intervals, served_tok_s, stopped_answering, summary, tok_s
from doctor.render.samples import render_series


def srv(t, in_flight, tokens, running=None, queued=0.0, busy=None, decode_s=None):
    return ServerSample(t, in_flight=in_flight, queued=queued, tokens_total=tokens, decode_s_total=decode_s,
                        slots_busy=busy if busy is not None else int(in_flight), slots=4, tokens_in_progress=running)


def gpu(util_by_second):
    return GpuSeries(index=0, name="NVIDIA H200", samples=tuple(
        GpuSample(t_s=t + k / 5, util_gpu_pct=u, sm_clock_mhz=1980, mem_clock_mhz=3201, reasons=())
        for t, u in enumerate(util_by_second) for k in range(5)))


def test_running_requests_count_before_llama_server_adds_them_at_their_end():
    a, b = srv(0.0, 2, 100, running=40), srv(2.0, 2, 100, running=140)  # nothing ended, 100 tokens generated
    assert generated(b) == 240 and served_tok_s(a, b) == 50.0
    ended = srv(4.0, 0, 340, running=0)  # both ended: their tokens moved into the counter
    assert served_tok_s(b, ended) == 50.0
    assert served_tok_s(srv(0.0, 1, None), b) is None and served_tok_s(b, a) is None  # no count, or time backwards


def test_idle_stretches_are_one_interval_with_the_gpu_beside_each():
    s = ServerSeries("http://127.0.0.1:8080", "llama-server", (
        srv(0, 1, 0, 0), srv(2, 2, 0, 100), srv(4, 0, 300, 0), srv(6, 0, 300, 0), srv(8, 0, 300, 0), srv(10, 1, 300, 10)))
    rows = intervals(s, gpu([95, 96, 97, 98, 0, 0, 0, 0, 50, 60]), merge_idle=True)
    assert [(r.t0_s, r.t1_s, r.working) for r in rows] == [(0, 2, True), (2, 4, True), (4, 8, False), (8, 10, True)]
    assert rows[0].served_tok_s == 50.0 and rows[1].served_tok_s == 100.0 and rows[2].served_tok_s == 0.0
    assert (rows[0].gpu_util_pct, rows[2].gpu_util_pct, rows[2].sm_clock_mhz) == (95.5, 0.0, 1980.0)
    assert len(intervals(s)) == 5  # unmerged: every pair of readings


def test_summary_separates_the_seconds_with_work_from_the_idle_window():
    s = ServerSeries("http://127.0.0.1:8080", "llama-server", (
        srv(0, 1, 0, 0, decode_s=0.0), srv(2, 1, 0, 120), srv(4, 0, 240, 0, decode_s=2.4), srv(6, 0, 240, 0),
        srv(20, 0, 240, 0)))
    ev = summary(s)
    assert ev["tokens_served"] == 240 and ev["served_tok_s"] == 12.0  # 240 over the 20 s window
    assert (ev["working_s"], ev["working_intervals"], ev["served_tok_s_working"]) == (4.0, 2, 60.0)
    assert ev["served_tok_s_peak"] == 60.0 and ev["per_request_tok_s"] == 100.0  # 240 tokens in 2.4 slot-seconds


def test_a_server_that_went_silent_is_told_from_one_that_missed_a_reading():
    silent = ServerSample(8.0, error="/metrics: connection refused")
    ok = srv(0, 1, 0, 0)
    assert stopped_answering(ServerSeries("u", "vllm", (ok, srv(4, 1, 50), silent, silent))) == 8.0
    assert stopped_answering(ServerSeries("u", "vllm", (ok, silent, srv(12, 1, 50)))) is None


def test_the_report_draws_a_timeline_beside_the_gpu():
    s = ServerSeries("http://127.0.0.1:8080", "llama-server", (
        srv(0, 1, 0, 0), srv(2, 4, 0, 300), srv(4, 0, 600, 0), srv(6, 0, 600, 0), srv(8, 0, 600, 0)))
    text = "\n".join(render_series(SampleSeries("2026-12-04T19:00:00Z", 8.0, 5.0, gpus=(gpu([97] * 4 + [0] * 4),),
                                                server=s)))
    assert "llama-server at http://127.0.0.1:8080, read 5 times (every 2 s): at most 4 in flight, 0 queued, 4 of 4" in text
    assert "served: 600 tokens generated in the window; 150 tok/s over the 4 s with work, peak 150 tok/s" in text
    assert "    0.0–2.0             1→4       0     1→4 of 4         150.0       97%   1,980    3,201\n" in text
    assert "    4.0–8.0               0       0       0 of 4           0.0        0%   1,980    3,201  idle\n" in text
    assert "tokens generated between two readings" in text


def test_speeds_are_printed_to_a_sensible_precision():
    assert (tok_s(256.04), tok_s(63.7), tok_s(7.46), tok_s(0.0)) == ("256 tok/s", "64 tok/s", "7.5 tok/s", "0 tok/s")
