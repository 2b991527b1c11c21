"""`probe --streams` with llama.cpp in force: the doctor starts the user's llama-server (a fake executable speaking
/health and streamed /v1/completions from --parallel slots, probe_fakes/llama_bin/llama-server) with one slot per
stream, waits for /health, times the rounds and always stops it: after the rounds, when it exits or never gets
ready, and when interrupted (the rounds finished before are kept)."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import MACHINES, ROOT

from doctor.facts.replay import load_document
from doctor.model.engines import EngineFacts, LlamaCppFacts
from doctor.model.findings import Status
from doctor.model.ids import FailureKind
from doctor.model.plan import Plan
from doctor.model.report import build_report
from doctor.probe.llama_server_streams import ServerLaunch, drive
from doctor.probe.streams import StreamsOptions
from doctor.run.streams_stage import drive_streams
from doctor.verdict.streams import judge

FAKE = Path(__file__).parent / "probe_fakes" / "llama_bin" / "llama-server"
V100 = load_document(str(MACHINES / "v100-pcie-16gb-healthy.json")).facts


@pytest.fixture
def args_file(tmp_path, monkeypatch):
    path = tmp_path / "argv.json"
    monkeypatch.setenv("FAKE_LLAMA_ARGS", str(path))
    return path


def gone(pid: int, within_s: float = 5.0) -> bool:
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


def launch(tmp_path: Path, slots: int = 4) -> ServerLaunch:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    return ServerLaunch(str(FAKE), str(model), slots, 1024)


def test_it_starts_llama_server_with_a_slot_per_stream_times_the_rounds_and_stops_it(tmp_path, args_file):
    said: list[str] = []
    probe = drive(launch(tmp_path), StreamsOptions((1, 2, 4), tokens=30), say=said.append)
    started = json.loads(args_file.read_text())
    argv = started["argv"]
    assert argv[argv.index("--parallel") + 1] == "4" and argv[argv.index("-c") + 1] == "4096"  # 4 slots of 1024
    assert argv[argv.index("--host") + 1] == "127.0.0.1" and argv[argv.index("-ngl") + 1] == "999"
    assert "--metrics" in argv and argv[argv.index("-fa") + 1] == "on"
    assert gone(started["pid"]), "llama-server left running"
    st = probe.streams
    assert probe.status == "ok" and probe.engine == "llama.cpp" and st.driven and st.mode == "parallel"
    assert "--parallel 4 -c 4096" in st.mode_why and st.context_per_stream == 1024
    one, _, four = st.rounds
    assert four.total_tok_s > 1.8 * one.total_tok_s and all(t.tokens == 30 for t in four.requests)
    assert all(r.repeats >= 3 and len(r.totals_tok_s) == r.repeats for r in st.rounds)  # each round repeated (runs 3)
    f = judge(st)
    assert f.status is Status.PASS and f.summary.startswith("llama-server (parallel) batches")
    assert "repeats, totals" in probe.summary  # the spread, briefly
    assert any("ready at http://127.0.0.1:" in s for s in said)


def test_a_server_that_exits_while_loading_is_the_probes_error_with_its_last_words(tmp_path, args_file, monkeypatch):
    monkeypatch.setenv("FAKE_LLAMA_FAIL", "load")
    probe = drive(launch(tmp_path), StreamsOptions((1, 2), tokens=8))
    assert probe.status == "failed" and not probe.streams.rounds
    assert "exited (code 1) before it was ready" in probe.streams.error and "error loading model" in probe.streams.error
    assert judge(probe.streams).status is Status.FAIL and "input_error" not in judge(probe.streams).evidence


def test_a_server_never_ready_is_stopped_after_the_bound(tmp_path, args_file, monkeypatch):
    monkeypatch.setenv("FAKE_LLAMA_FAIL", "never")
    t0 = time.monotonic()
    probe = drive(launch(tmp_path), StreamsOptions((1,), tokens=8), health_s=1.5)
    assert time.monotonic() - t0 < 15 and "not ready within 1.5 s" in probe.streams.error
    assert gone(json.loads(args_file.read_text())["pid"])


def test_an_interrupt_keeps_the_rounds_finished_and_stops_the_server(tmp_path, args_file):
    def say(text: str) -> None:
        if text.startswith("2 concurrent streams"):  # Ctrl-C as the second round starts
            raise KeyboardInterrupt

    probe = drive(launch(tmp_path), StreamsOptions((1, 2, 4), tokens=12), say=say)
    assert probe.status == "cancelled" and probe.error_kind == FailureKind.CANCELLED
    assert [r.streams for r in probe.streams.rounds] == [1] and probe.streams.rounds[0].total_tok_s > 0
    assert gone(json.loads(args_file.read_text())["pid"])


def facts(binary: str | None, env: dict[str, str] | None = None):
    return replace(V100, model=None, engines=EngineFacts(llama_cpp=LlamaCppFacts(
        binaries={"llama-server": binary} if binary else {}), env=env or {}))


def test_the_launch_keeps_the_users_flash_attn_and_cache_settings(tmp_path):
    from doctor.facts.engines.launch import parse_llama_args
    from doctor.run.streams_stage import llama_server_launch

    gguf = str(tmp_path / "m.gguf")
    plain = llama_server_launch(build_report(facts(str(FAKE)), Plan(model_path=gguf, engine="llama.cpp"), []), (1, 4))[0]
    assert (plain.flash_attn, plain.cache_type_k, plain.context, plain.slots) == ("on", "f16", 4096, 4)
    env = facts(str(FAKE), {"LLAMA_ARG_FLASH_ATTN": "0", "LLAMA_ARG_CACHE_TYPE_K": "q8_0"})
    by_env = llama_server_launch(build_report(env, Plan(model_path=gguf, engine="llama.cpp"), []), (1, 2))[0]
    assert (by_env.flash_attn, by_env.cache_type_k, by_env.cache_type_v) == ("off", "q8_0", "f16")
    line = parse_llama_args(f"llama-server -m {gguf} -c 8192 -fa auto -ctk q4_0 -ctv q4_0")
    own = llama_server_launch(build_report(env, Plan(model_path=gguf, engine="llama.cpp", engine_launch=line), []),
                              (1, 2))[0]
    assert (own.flash_attn, own.cache_type_k, own.cache_type_v, own.context) == ("auto", "q4_0", "q4_0", 8192)


def test_the_run_drives_the_llama_server_the_engine_facts_found(tmp_path, args_file):
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    base = build_report(facts(str(FAKE)), Plan(model_path=str(model), engine="llama.cpp", max_seq_len=2048), [])
    report = drive_streams(base, (1, 2), lambda e: None, tokens=20)
    f = next(f for f in report.findings if f.id == "concurrency")
    assert report.probe.streams.context_per_stream == 2048 and f.evidence["engine"] == "llama-server"
    argv = json.loads(args_file.read_text())["argv"]
    assert argv[argv.index("-c") + 1] == "4096" and argv[argv.index("-m") + 1] == str(model)
    assert f.status in (Status.PASS, Status.INFO), f.summary


def test_no_llama_server_or_no_gguf_is_said_and_a_folder_is_the_users_input(tmp_path):
    gguf = build_report(facts(None), Plan(model_path=str(tmp_path / "m.gguf"), engine="llama.cpp"), [])
    f = next(f for f in drive_streams(gguf, (1,), lambda e: None).findings if f.id == "concurrency")
    assert f.status is Status.FAIL and "none is on PATH" in f.summary and "input_error" not in f.evidence
    folder = build_report(facts(str(FAKE)), Plan(model_path=str(tmp_path), engine="llama.cpp"), [])
    f = next(f for f in drive_streams(folder, (1,), lambda e: None).findings if f.id == "concurrency")
    assert "give --model FILE.gguf" in f.evidence["input_error"]
    assert os.access(FAKE, os.X_OK)


SITECUSTOMIZE = '''
"""Test-only (tests/doctor/probe/test_llama_server_streams.py): no GPU here, so the probe's gate is opened."""
import os

if os.environ.pop("V100_DOCTOR_TEST_NO_GPU_GATE", None):  # the doctor only, not llama-server
    import doctor.run.probe_setup as setup

    setup.skip_reason = lambda report, synthetic=False, engine="exllamav2": None
'''


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGHUP])
def test_the_cli_stops_its_llama_server_on_an_interrupt_and_reports_the_rounds_before_it(tmp_path, signum):
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    model, out, argv_file = tmp_path / "m.gguf", tmp_path / "r.json", tmp_path / "argv.json"
    model.write_bytes(b"GGUF")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(site)]), "V100_DOCTOR_TEST_NO_GPU_GATE": "1",
           "PATH": f"{FAKE.parent}{os.pathsep}{os.environ['PATH']}", "FAKE_LLAMA_ARGS": str(argv_file),
           "FAKE_LLAMA_STEP_S": "0.03"}
    env.pop("PYTEST_CURRENT_TEST", None)
    doctor = subprocess.Popen([sys.executable, "-m", "doctor", "probe", "--streams", "1,2,4", "--tokens", "40",
                               "--model", str(model), "--engine", "llama.cpp", "-o", str(out)], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = ""
    try:
        end = time.monotonic() + 90
        while time.monotonic() < end and "2 concurrent streams" not in seen:  # the first round is done
            ready, _, _ = select.select([doctor.stderr], [], [], 0.5)
            if ready:
                seen += os.read(doctor.stderr.fileno(), 65536).decode(errors="replace")
            if doctor.poll() is not None:
                break
        assert "2 concurrent streams" in seen, seen
        doctor.send_signal(signum)
        doctor.wait(timeout=20)
    finally:
        if doctor.poll() is None:
            doctor.kill()
    assert doctor.returncode == 128 + signum, seen
    assert gone(json.loads(argv_file.read_text())["pid"]), "llama-server left running"
    probe = json.loads(out.read_text())["probe"]
    assert probe["status"] == "cancelled" and [r["streams"] for r in probe["streams"]["rounds"]] == [1]


def test_synthetic_writes_a_gguf_serves_it_and_removes_it(tmp_path, args_file, monkeypatch):
    import doctor.run.engine_stage as engine_stage
    from doctor.probe.runner import SyntheticRequest

    written: list[str] = []

    def write(folder, gb, layers, say=lambda text: None):  # the 27B-shape writer's stand-in: a name, no gigabytes
        path = os.path.join(folder, "synthetic-q4_k_m.gguf")
        Path(path).write_bytes(b"GGUF")
        written.append(path)
        return path, f"synthetic Q4_K_M ({gb:g} GB)"

    monkeypatch.setattr(engine_stage, "write_synthetic_gguf", write)
    base = build_report(facts(str(FAKE)), Plan(engine="llama.cpp"), [])
    report = drive_streams(base, (1, 2), lambda e: None, synthetic=SyntheticRequest(target_gb=1.5), tokens=12)
    argv = json.loads(args_file.read_text())["argv"]
    assert argv[argv.index("-m") + 1] == written[0] and not Path(written[0]).exists()  # served, then removed
    assert report.probe.synthetic == "synthetic Q4_K_M (1.5 GB)" == report.probe.streams.model
    assert [r.streams for r in report.probe.streams.rounds] == [1, 2]
