"""`probe --streams` in ExLlamaV2 itself: the real streams child (doctor/probe/exl2_streams.py) against a fake
exllamav2 and torch (probe_fakes/fake_exl2) that batch when paged and take turns when not. Paged or not as ExLlamaV2
decides, rounds kept when a later one runs out of memory or the probe is stopped, the fp8 cache refused as the
generator refuses it, and the report, its JSON and its replay."""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import replace
from pathlib import Path

import jsonschema
from conftest import MACHINES, run_cli

from doctor.facts.replay import load_document
from doctor.model.findings import Status
from doctor.model.ids import FailureKind
from doctor.model.plan import Plan
from doctor.model.report import build_report, report_to_json
from doctor.probe.child import child_env
from doctor.probe.engine_streams import run_exl2_streams
from doctor.probe.exl2_streams import paged_mode
from doctor.probe.protocol import ProbeSpec
from doctor.run.streams_stage import drive_streams, with_streams
from doctor.verdict.streams import judge

FAKE = Path(__file__).parent / "probe_fakes" / "fake_exl2"
V100 = load_document(str(MACHINES / "v100-pcie-16gb-healthy.json")).facts


def fake_env(**extra: str) -> dict[str, str]:
    env = child_env()
    env["PYTHONPATH"] = f"{FAKE}{os.pathsep}{env['PYTHONPATH']}"
    env.update({"FAKE_EXL2_STEP_S": "0.01", **extra})
    return env


def model_dir(tmp_path: Path) -> str:
    (tmp_path / "config.json").write_text("{}")
    return str(tmp_path)


def drive(tmp_path: Path, counts=(1, 2, 4), cache_mode="q4", cancel=None, events=None, **extra: str):
    spec = ProbeSpec(model_path=model_dir(tmp_path), streams=counts, tokens=24, warmup_tokens=16, prompt_tokens=32,
                     max_seq_len=1000, cache_mode=cache_mode)
    return run_exl2_streams(spec, env=fake_env(**extra), cancel=cancel,
                            on_event=(events.append if events is not None else None))


def test_paged_mode_is_exllamav2s_own_rule_the_card_first():
    assert paged_mode((9, 0), True, False, True, env={}) == (True, paged_mode((9, 0), True, False, True, env={})[1])
    assert paged_mode((9, 0), True, False, True, env={})[0]
    v100 = paged_mode((7, 0), True, False, True, env={})  # installed, but flash-attn cannot run on sm_70
    assert not v100[0] and "sm_70" in v100[1] and "sm_80" in v100[1] and "take turns" in v100[1]
    assert "not installed" in paged_mode((9, 0), False, False, False, env={})[1]
    assert "older than 2.5.7" in paged_mode((8, 0), False, False, True, env={})[1]
    assert "EXLLAMA_NO_FLASH_ATTN" in paged_mode((9, 0), True, False, True, env={"EXLLAMA_NO_FLASH_ATTN": "1"})[1]
    assert "no_flash_attn" in paged_mode((9, 0), True, True, True, env={})[1]


def test_paged_the_jobs_batch_and_the_verdict_says_so(tmp_path):
    events: list[dict] = []
    probe = drive(tmp_path, events=events, FAKE_EXL2_FLASH="1")
    st = probe.streams
    assert probe.status == "ok" and st.mode == "paged" and st.engine.startswith("exllamav2 ") and st.driven
    assert st.context_per_stream == 1024 and st.cache_mode == "q4"  # 1000 rounded up to whole pages of 256
    assert [r.streams for r in st.rounds] == [1, 2, 4] and not any(r.failed for r in st.rounds)
    assert all(t.tokens == 24 for r in st.rounds for t in r.requests)
    one, _, four = st.rounds
    assert four.total_tok_s > 2 * one.total_tok_s and four.per_stream_tok_s < one.per_stream_tok_s
    f = judge(st)
    assert f.status is Status.PASS and f.summary.startswith("exllamav2 ") and "(paged) batches" in f.summary
    assert f.evidence["mode"] == "paged" and "input_error" not in f.evidence
    phases = [e["phase"] for e in events if e["event"] == "phase"]
    assert all(r.repeats >= 3 and len(r.totals_tok_s) == r.repeats and r.window == 3 for r in st.rounds)  # --runs 3
    assert phases.count("warmup") == 3 and phases.count("streams") == sum(r.repeats for r in st.rounds)  # warmed up
    # once before each round, its repeats timed after it
    assert phases.index("load") < phases.index("warmup") < phases.index("streams")


def test_unpaged_the_jobs_take_turns_and_the_report_says_why(tmp_path):
    probe = drive(tmp_path, FAKE_EXL2_CC="7.0", FAKE_EXL2_FLASH="1")  # a V100: flash-attn installed, but sm_70
    st = probe.streams
    assert st.mode == "unpaged" and "sm_70" in st.mode_why
    one, two, four = st.rounds
    assert four.total_tok_s < 1.15 * one.total_tok_s
    assert four.ttft_max_s > 3 * 24 * 0.01  # the last job waits for the three before it
    f = judge(st)
    assert f.status is Status.WARN and "queued, not slow" in f.summary and "sm_70" in f.summary
    assert f.fix.startswith("flash-attn 2 needs sm_80") and f.evidence["mode_why"] == st.mode_why
    assert st.compute_capability == "7.0" and any("--parallel" in c for c in f.commands)
    hopper = judge(replace(st, compute_capability="9.0", mode_why="flash-attn is not installed"))
    assert "install flash-attn 2.5.7" in hopper.fix and not hopper.commands  # the card can page: that is the fix
    assert "on sm_80 and newer" in judge(replace(st, compute_capability="")).fix  # an older report: both ways
    slow_first = replace(st, rounds=(replace(one, total_tok_s=round(one.total_tok_s * 0.6, 2),
                                             totals_tok_s=tuple(t * 0.6 for t in one.totals_tok_s)), two, four))
    noisy = judge(slow_first)  # a first round still warming: totals rise ~1.6x; unpaged, they queued all the same
    assert noisy.status is Status.WARN and "ran the 4 jobs one at a time" in noisy.summary
    assert judge(replace(slow_first, mode="paged")).status is Status.PASS  # paged, the same totals are batching


def test_out_of_memory_at_four_streams_is_that_rounds_error_and_the_earlier_rounds_stand(tmp_path):
    probe = drive(tmp_path, counts=(1, 2, 4, 8), FAKE_EXL2_FLASH="1", FAKE_EXL2_OOM_CACHE="4096")
    st = probe.streams
    assert probe.status == "ok" and [r.streams for r in st.rounds] == [1, 2, 4]
    assert st.rounds[0].total_tok_s > 0 and st.rounds[1].total_tok_s > 0
    four = st.rounds[2]
    assert four.failed == 4 and four.requests[0].error.startswith("out of GPU memory at 4 streams (cache 4096 tokens")
    assert "not run: 8 streams" in st.error
    f = judge(st)
    assert f.status is Status.FAIL and "4 of 4 concurrent streams failed: out of GPU memory" in f.summary


def test_out_of_memory_at_load_names_the_memory_budget(tmp_path):
    probe = drive(tmp_path, FAKE_EXL2_OOM_CACHE="1")
    assert probe.status == "failed" and probe.error_kind == FailureKind.OOM and not probe.streams.rounds
    assert probe.streams.driven and probe.streams.mode == "unpaged"  # said before the load failed
    report = with_streams(build_report(V100, Plan(model_path="/m", max_seq_len=1000), []), probe)
    ids = {f.id: f for f in report.findings}
    assert ids["concurrency"].status is Status.FAIL and "could not run" in ids["concurrency"].summary
    assert ids["memory-budget"].status is Status.FAIL and "input_error" not in ids["concurrency"].evidence


def test_the_fp8_cache_is_refused_as_the_generator_refuses_it_one_line_for_the_user(tmp_path):
    probe = drive(tmp_path, cache_mode="fp8", FAKE_EXL2_FLASH="1")
    assert probe.error_kind == FailureKind.BAD_SPEC and probe.streams.bad_input
    assert "ExLlamaV2Cache_8bit" in probe.streams.error and "--cache-mode q8" in probe.streams.error
    assert judge(probe.streams).evidence["input_error"] == probe.streams.error


def test_a_probe_stopped_mid_round_keeps_the_rounds_it_finished_and_leaves_no_child(tmp_path):
    pid_file = tmp_path / "pid"
    cancel = threading.Event()
    events: list[dict] = []

    def stop_when_hung() -> None:
        end = time.monotonic() + 60
        while time.monotonic() < end and not (pid_file.exists() and pid_file.read_text().strip()):
            time.sleep(0.05)
        cancel.set()

    threading.Thread(target=stop_when_hung, daemon=True).start()
    probe = drive(tmp_path, cancel=cancel, events=events, FAKE_EXL2_FLASH="1", FAKE_EXL2_HANG_AT="2",
                  FAKE_PID_FILE=str(pid_file))
    assert probe.status == "cancelled" and probe.error_kind == FailureKind.CANCELLED
    assert [r.streams for r in probe.streams.rounds] == [1] and probe.streams.rounds[0].total_tok_s > 0
    pid = int(pid_file.read_text())
    end = time.monotonic() + 5
    while time.monotonic() < end and Path(f"/proc/{pid}").exists() and "Z" not in _state(pid):
        time.sleep(0.05)
    assert not Path(f"/proc/{pid}").exists() or "Z" in _state(pid)
    assert any(e["event"] == "cancelled" for e in events)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "Z"


def test_the_report_its_json_and_its_replay(tmp_path, monkeypatch, report_schema):
    monkeypatch.setenv("PYTHONPATH", f"{FAKE}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    for k, v in fake_env(FAKE_EXL2_CC="7.0").items():
        if k.startswith("FAKE_"):
            monkeypatch.setenv(k, v)
    (tmp_path / "m").mkdir()
    base = build_report(V100, Plan(model_path=model_dir(tmp_path / "m"), max_seq_len=1000, cache_mode="q4"), [])
    seen: list = []
    report = drive_streams(base, (1, 2), seen.append, tokens=24, warmup_tokens=16, prompt_tokens=32)
    assert report.probe is not None and report.probe.streams is not None and report.probe.streams.mode == "unpaged"
    live = next(f for f in report.findings if f.id == "concurrency")
    assert live.status is Status.WARN, live.summary
    out = tmp_path / "streams.json"
    out.write_text(report_to_json(report))
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, report_schema)
    assert doc["probe"]["streams"]["mode"] == "unpaged" and [r["streams"] for r in doc["probe"]["streams"]["rounds"]] == [1, 2]
    monkeypatch.delenv("PYTHONPATH")
    again = run_cli("--replay", str(out), "--json")
    replayed = next(f for f in json.loads(again.stdout)["findings"] if f["id"] == "concurrency")
    assert replayed["summary"] == live.summary and replayed["status"] == "warn"
    text = run_cli("--replay", str(out), "--no-tui").stdout
    assert "dynamic generator, unpaged, q4 cache, 1024 tokens per stream" in text and "why: this card is sm_70" in text


def test_an_engine_it_does_not_drive_is_one_line_pointing_at_engine_url():
    base = build_report(V100, Plan(model_path="/m", engine="vllm"), [])
    report = drive_streams(base, (1, 2), lambda e: None)
    f = next(f for f in report.findings if f.id == "concurrency")
    assert f.status is Status.FAIL and "--engine-url" in f.evidence["input_error"]


def test_bad_input_is_one_line_and_exit_3(tmp_path):
    for args, says in ((("--streams", "1,2"), "--model PATH"),
                       (("--streams", "1,2", "--engine-url", "http://127.0.0.1:9", "--synthetic"), "leave out --model"),
                       (("--streams", "1", "--model", str(tmp_path / "nothing")), "--model")):
        done = run_cli("probe", *args)
        assert done.returncode == 3 and says in done.stderr and "Traceback" not in done.stderr, (args, done.stderr)
