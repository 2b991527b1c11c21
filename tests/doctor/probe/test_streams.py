"""`probe --streams` against a local fake server: a server that batches raises the total and is judged batched, one
that takes requests in turn keeps it and is judged queued; Ollama's API too; the report's JSON, its replay, and bad
input (one line, exit 3)."""

from __future__ import annotations

import json

import jsonschema
from conftest import run_cli
from serving_support import FakeEngine

from doctor.model.findings import Status
from doctor.model.streams import StreamsProbe, StreamsRound, StreamTiming
from doctor.probe.streams import StreamsOptions, probe_streams, summarize_round
from doctor.verdict.streams import judge


def test_a_batching_server_raises_the_total_and_is_judged_batched():
    with FakeEngine(batched=True, step_s=0.012) as server:  # steps long enough that 2 busy cores do not blur them
        probe = probe_streams(server.url, StreamsOptions((1, 4), tokens=30))
    assert not probe.error and probe.api == "/v1/completions" and probe.model == "fake-27b.gguf"
    one, four = probe.rounds
    assert one.streams == 1 and four.streams == 4 and not one.failed and not four.failed
    assert all(r.tokens == 30 for r in four.requests)  # the usage counted, not guessed
    assert four.total_tok_s > 1.8 * one.total_tok_s  # four streams at 1.45x the step time: ~2.8x the total
    assert four.per_stream_tok_s < one.per_stream_tok_s
    f = judge(probe)
    assert f.status == Status.PASS and "batches" in f.summary and f.evidence["total_gain"] > 1.8


def test_a_server_that_takes_turns_is_judged_queued_not_slow():
    with FakeEngine(batched=False, step_s=0.012) as server:
        probe = probe_streams(server.url, StreamsOptions((1, 3), tokens=40))
    one, three = probe.rounds
    assert three.total_tok_s < 1.15 * one.total_tok_s
    assert three.ttft_max_s > 2 * 40 * 0.012  # the last one waits for the two before it to decode their 40 tokens
    f = judge(probe)
    assert f.status == Status.WARN and f.summary.startswith("queued, not slow")
    assert any("--parallel" in c for c in f.commands) and any("OLLAMA_NUM_PARALLEL" in c for c in f.commands)


def test_ollama_streams_through_its_own_api():
    with FakeEngine(kind="ollama", batched=True) as server:
        probe = probe_streams(server.url, StreamsOptions((1, 2), tokens=20))
    assert probe.api == "/api/generate" and probe.model == "fake:27b"
    assert [r.streams for r in probe.rounds] == [1, 2] and all(r.total_tok_s > 0 for r in probe.rounds)


def test_nothing_listening_is_an_error_not_a_traceback():
    probe = probe_streams("http://127.0.0.1:9", StreamsOptions((1,), tokens=8))
    assert probe.error.startswith("cannot reach http://127.0.0.1:9") and not probe.rounds
    assert judge(probe).status == Status.FAIL and judge(probe).evidence["input_error"].startswith("cannot reach")
    assert "not an http(s) URL" in probe_streams("ftp://10.1.2.3:8080", StreamsOptions((1,))).error


def test_a_round_where_streams_fail_says_so():
    done = (StreamTiming(20, 0.1, 1.0), StreamTiming(0, 0.0, 0.0, "http://x answered HTTP 503: busy"))
    r = summarize_round(2, done)
    assert r.failed == 1 and r.total_tok_s > 0
    f = judge(StreamsProbe("http://x", "/v1/completions", "m", 20, (summarize_round(1, done[:1]), r)))
    assert f.status == Status.FAIL and "HTTP 503" in f.summary
    assert summarize_round(1, done[1:]) == StreamsRound(1, done[1:], 0.0, 0.0, 0.0, 0.0, 0.0, failed=1)


def test_the_cli_report_its_json_and_its_replay(tmp_path, report_schema):
    out = tmp_path / "streams.json"
    with FakeEngine(batched=False, step_s=0.012) as server:  # steps that load on 2 cores does not blur
        done = run_cli("probe", "--streams", "1,2", "--tokens", "40", "--engine-url", server.url, "--json",
                       "--runs", "2", "--settle-pct", "50", "-o", str(out), timeout=120)
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, report_schema)
    rounds = doc["probe"]["streams"]["rounds"]
    assert all(r["repeats"] >= 2 and len(r["totals_tok_s"]) == r["repeats"] and r["window"] == 2 for r in rounds)
    assert [r["streams"] for r in rounds] == [1, 2] and rounds[1]["ttft_max_s"] > rounds[0]["ttft_max_s"]
    live = next(f for f in doc["findings"] if f["id"] == "concurrency")
    assert live["status"] == "warn" and "queued" in live["summary"], done.stderr
    again = run_cli("--replay", str(out), "--json")
    replayed = next(f for f in json.loads(again.stdout)["findings"] if f["id"] == "concurrency")
    assert replayed["summary"] == live["summary"] and replayed["status"] == "warn"
    text = run_cli("--replay", str(out), "--no-tui")
    assert "Probe (concurrent streams)" in text.stdout and "2 streams:" in text.stdout and "repeats, totals" in text.stdout


def test_bad_input_is_one_line_and_exit_3():
    for args, says in ((("--streams", "1,2"), "--engine-url"), (("--streams", "0,2", "--engine-url", "http://127.0.0.1:9"), "1 to 64"),
                       (("--streams", "1,x"), "1 to 64"), (("--streams", "1", "--engine-url", "ftp://10.0.0.2:80"), "not an http(s) URL")):
        done = run_cli("probe", *args)
        assert done.returncode == 3 and says in done.stderr and "Traceback" not in done.stderr, (args, done.stderr)


def test_a_server_that_cannot_be_asked_exits_3_with_one_line_as_the_timing_probe_does(tmp_path):
    out = tmp_path / "r.json"
    done = run_cli("probe", "--streams", "1", "--engine-url", "http://127.0.0.1:9", "-o", str(out))
    assert done.returncode == 3 and "cannot reach http://127.0.0.1:9" in done.stderr and "Traceback" not in done.stderr
    assert out.exists()  # the report is still written, and replays to the same code
    assert run_cli("--replay", str(out), "--no-tui").returncode == 3
