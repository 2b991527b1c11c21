"""The model checks through the real command line: exit codes, the split-path usage error, planning, replay."""

from __future__ import annotations

import json
import shutil

from conftest import MACHINES, run_cli
from model_support import MODELS, copy_fixture, tree_digest

SEED = str(MODELS / "qwen2-27b-exl2-3.75bpw")


def by_id(report: dict) -> dict:
    return {f["id"]: f for f in report["findings"]}


def test_missing_model_is_an_input_error_with_a_partial_report(tmp_path):
    out = tmp_path / "r.json"
    proc = run_cli("--model", "/nonexistent/qwen27b", "--replay", str(MACHINES / "v100-pcie-16gb-healthy.json"),
                   "--json", "-o", str(out))
    assert proc.returncode == 3
    assert "v100-doctor: error: --model '/nonexistent/qwen27b': no such file or directory" in proc.stderr
    assert "Traceback" not in proc.stderr
    report = json.loads(out.read_text())
    assert by_id(report)["model-path"]["status"] == "fail" and by_id(report)["gpu-present"]["status"] == "pass"


def test_unquoted_path_split_by_the_shell_is_a_usage_error_with_the_quoted_path():
    """--model takes one path: the piece the shell split off is named, with the quoted path, before any run."""
    proc = run_cli("--model", str(MODELS / "qwen27b"), "exl2", "--target-gpu", "v100-pcie-16gb", "--json")
    assert proc.returncode == 3 and not proc.stdout and "Traceback" not in proc.stderr
    assert f"--model '{MODELS / 'qwen27b exl2'}'" in proc.stderr and "exl2 was left over" in proc.stderr


def test_planning_on_this_gpu_less_machine_reports_the_seed_numbers(validate):
    proc = run_cli("--model", SEED, "--target-gpu", "v100-pcie-16gb", "--max-seq-len", "8192", "--cache-mode", "q8", "--json")
    report = validate(json.loads(proc.stdout))
    got = by_id(report)
    assert report["plan"]["target_gpu"] == "v100-pcie-16gb"
    assert got["memory-budget"]["status"] == "pass" and "not measured" in got["memory-budget"]["summary"]
    assert got["ceiling"]["evidence"]["ceiling_tok_s_empty_cache"] == 72.0
    assert report["facts"]["model"]["config"]["num_hidden_layers"] == 64


def test_unknown_target_gpu_is_a_usage_error():
    proc = run_cli("--model", SEED, "--target-gpu", "v100", "--json")
    assert proc.returncode == 3 and "did you mean v100-pcie-16gb" in proc.stderr and not proc.stdout


def test_text_output_says_the_card_is_a_planning_target():
    proc = run_cli("--model", SEED, "--target-gpu", "v100-pcie-16gb", "--max-seq-len", "32768", "--no-tui")
    assert "planning for --target-gpu v100-pcie-16gb (knowledge-base numbers, not measured)" in proc.stdout
    assert "[✗] memory-budget: does not fit" in proc.stdout and proc.returncode == 2


def test_replay_uses_the_recorded_model_facts(tmp_path):
    d = copy_fixture("tiny-gptq-desc-act", tmp_path / "model")
    before = tree_digest(d)
    report_file = tmp_path / "r.json"
    run_cli("--model", str(d), "--replay", str(MACHINES / "v100-pcie-16gb-healthy.json"), "--json", "-o", str(report_file))
    assert tree_digest(d) == before
    shutil.rmtree(d)  # the model is gone; the report still knows it
    proc = run_cli("--replay", str(report_file), "--json")
    got = by_id(json.loads(proc.stdout))
    assert got["quant-format"]["status"] == "pass" and "reordered at load" in got["quant-format"]["summary"]
    assert got["model-path"]["status"] == "pass"


def test_check_by_id_without_model_skips_with_the_reason():
    proc = run_cli("--replay", str(MACHINES / "v100-pcie-16gb-healthy.json"), "--check", "memory-budget", "--json")
    (f,) = json.loads(proc.stdout)["findings"]
    assert f["status"] == "skip" and "no --model given" in f["summary"]
