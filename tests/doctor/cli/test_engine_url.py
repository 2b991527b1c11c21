"""--engine-url on the main command and `probe` (issue 35): a running server (a fake Ollama or llama-server on
127.0.0.1) timed through the one Run: the report validates against v100-doctor/report/1, --replay of it reaches the
same verdict and exit code, and a server that cannot be asked is one line on stderr and exit 3, the report still
written."""

from __future__ import annotations

import json

import jsonschema
from conftest import run_cli
from engine_server_support import GIB, FakeServer, closed_port_url, ollama_routes, openai_routes


def finding(report: dict, check: str) -> dict:
    return next(f for f in report["findings"] if f["id"] == check)


def test_a_running_ollama_is_timed_and_replays_to_the_same_verdict(tmp_path, report_schema):
    out = tmp_path / "ollama.json"
    with FakeServer(ollama_routes(rates=[30.0, 30.2, 30.1], size=18 * GIB, size_vram=9 * GIB)) as s:
        live = run_cli("--engine-url", s.url, "--json", "-o", str(out), "--no-tui", timeout=120)
    report = json.loads(live.stdout)
    jsonschema.validate(report, report_schema)
    assert report["engine_in_force"]["engine"] == "ollama" and "--engine-url" in report["engine_in_force"]["why"]
    assert report["plan"]["engine_server"]["flavour"] == "ollama"
    server = report["probe"]["server"]
    assert server["clock"] == "server" and server["vram_bytes"] == 9 * GIB and len(server["runs"]) >= 3
    speed = finding(report, "decode-speed")
    assert speed["status"] == "warn" and "50% of the model on the GPU" in speed["summary"]
    assert "PARAMETER num_ctx" in speed["fix"] and "-ngl" not in speed["fix"] and "torch" not in speed["fix"].lower()
    replay = run_cli("--replay", str(out), "--json", "--no-tui")
    again = json.loads(replay.stdout)
    assert replay.returncode == live.returncode
    assert again["engine_verdict"] == report["engine_verdict"] and finding(again, "decode-speed") == speed


def test_a_refused_server_is_one_line_and_exit_3_with_the_report_written(tmp_path):
    out = tmp_path / "refused.json"
    url = closed_port_url()
    live = run_cli("--engine-url", url, "-o", str(out), "--no-tui", timeout=120)
    errors = [line for line in live.stderr.splitlines() if line.startswith("v100-doctor: error:")]
    assert live.returncode == 3 and len(errors) == 1 and f"cannot reach {url}" in errors[0], live.stderr
    assert sum(f"cannot reach {url}" in line for line in live.stderr.splitlines()) == 1  # said once, not also as progress
    assert "Traceback" not in live.stderr and out.exists()
    assert run_cli("--replay", str(out), "--no-tui").returncode == 3


def test_probe_times_llama_server_by_its_own_timings(tmp_path):
    with FakeServer(openai_routes("llama-server", rates=[40.0])) as s:
        proc = run_cli("probe", "--engine-url", s.url + "/v1", "--json", "--runs", "3", "--tokens", "16", timeout=120)
    report = json.loads(proc.stdout)
    server = report["probe"]["server"]
    assert server["flavour"] == "llama-server" and server["clock"] == "server" and server["median_tok_s"] == 40.0
    assert report["engine_in_force"]["engine"] == "llama.cpp"


def test_a_url_that_is_not_one_is_refused_by_the_parser():
    proc = run_cli("--engine-url", "localhost:11434", "--no-tui")
    assert proc.returncode == 3 and "is not an http(s) URL" in proc.stderr and "Traceback" not in proc.stderr


def test_probe_refuses_engine_url_with_synthetic():
    proc = run_cli("probe", "--engine-url", "http://127.0.0.1:9", "--synthetic")
    assert proc.returncode == 3 and "--engine-url times the server's own model" in proc.stderr


def test_a_server_on_another_host_is_probed_without_this_hosts_gpu_checks():
    """`probe --engine-url` for a server elsewhere: this machine's GPU (none, on CI) decides nothing about it."""
    from doctor.model.engines import EngineServer
    from doctor.model.plan import Plan
    from doctor.run.probe_stage import probe_checks

    remote = EngineServer("http://10.0.0.5:11434", "ollama", "ollama", local=False)
    assert probe_checks(Plan(engine_server=remote), None) == ()
    assert probe_checks(Plan(engine_server=EngineServer("http://127.0.0.1:11434", "ollama", "ollama", local=True)), None)


def test_engine_url_with_replay_is_a_usage_error(tmp_path):
    from conftest import MACHINES

    proc = run_cli("--replay", str(MACHINES / "v100-pcie-16gb-healthy.json"), "--engine-url", "http://127.0.0.1:9",
                   "--no-tui")
    assert proc.returncode == 3 and "give one of them" in proc.stderr and "Traceback" not in proc.stderr
