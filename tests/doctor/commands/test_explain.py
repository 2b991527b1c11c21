"""`v100-doctor explain`: the three mixed real-world logs tested whole, confirmation against fixture machines, output formats."""

from __future__ import annotations

import json

import jsonschema
import pytest
from conftest import MACHINES, ROOT, run_cli

from checks.registry import check_ids

LOGS = ROOT / "fixtures" / "logs"
V100_CU130 = str(MACHINES / "v100-torch-2.11-cu130.json")
V100_FLASH = str(MACHINES / "v100-flash-attn-2.json")
SCHEMA = json.loads((ROOT / "doctor" / "schema" / "log-analysis-1.json").read_text())


def explain_json(log: str, *args: str) -> tuple[dict, int]:
    proc = run_cli("explain", str(LOGS / log), "--json", *args)
    assert proc.returncode in (0, 1, 2), proc.stderr
    doc = json.loads(proc.stdout)
    jsonschema.validate(doc, SCHEMA)
    return doc, proc.returncode


def by_signature(doc: dict) -> dict:
    return {m["signature"]: m for m in doc["matches"]}


def unexplained(doc: dict) -> list[tuple[str, int, str]]:
    return [(g["kind"], g["first_line"], g["example"]) for g in doc["unexplained"]["groups"]]


def test_tabbyapi_startup_failure_on_a_v100_with_flash_attn():
    doc, code = explain_json("tabbyapi-v100-startup.log", "--replay", V100_FLASH)
    found = by_signature(doc)
    assert set(found) == {"exllamav2-flash-attn-unsupported-gpu", "tabbyapi-compatibility-mode", "flash-attn-needs-ampere"}
    crash = found["flash-attn-needs-ampere"]
    assert (crash["first_line"], crash["checks"], crash["severity"]) == (40, ["flash-attn"], "error")
    assert crash["confirmation"]["verdict"] == "confirmed"
    assert "flash-attn 2.6.3 is installed but needs cc 8.0+" in crash["confirmation"]["reason"]
    assert found["tabbyapi-compatibility-mode"]["lines"] == [10, 11, 12]
    assert found["exllamav2-flash-attn-unsupported-gpu"]["first_line"] == 3
    assert unexplained(doc) == []
    assert doc["unexplained"]["error_lines"] == doc["unexplained"]["warning_lines"] == 0
    assert doc["log"]["lines"] == 40 and doc["log"]["matched_lines"] == 5
    assert code == 2


def test_the_same_crash_is_ruled_out_on_a_machine_without_flash_attn():
    doc, code = explain_json("tabbyapi-v100-startup.log", "--replay", V100_CU130)
    crash = by_signature(doc)["flash-attn-needs-ampere"]
    assert crash["confirmation"]["verdict"] == "ruled-out"
    assert crash["confirmation"]["reason"].startswith("flash-attn passed: flash-attn is not installed")
    compat = by_signature(doc)["tabbyapi-compatibility-mode"]["confirmation"]
    assert compat["verdict"] == "cannot-tell" and "pre-Ampere" in compat["reason"]
    assert by_signature(doc)["exllamav2-flash-attn-unsupported-gpu"]["confirmation"]["verdict"] == "ruled-out"
    assert code == 0  # every error and warning was ruled out; the info line does not count


def test_pip_install_that_pulled_a_cu130_torch():
    doc, code = explain_json("pip-torch-cu130-v100.log", "--replay", V100_CU130)
    found = by_signature(doc)
    assert set(found) == {"pip-torch-from-pypi-cu130", "pip-cuda13-packages", "torch-capability-cc-list",
                          "nvcc-unsupported-arch"}
    assert found["pip-torch-from-pypi-cu130"]["lines"] == [5, 21]
    assert found["pip-torch-from-pypi-cu130"]["numbers"] == {"torch_version": "2.11.0"}
    assert found["pip-cuda13-packages"]["count"] == 5
    warning = found["torch-capability-cc-list"]
    assert warning["numbers"]["card_cc"] == "7.0" and warning["numbers"]["suggested_cuda"] == "12.6, 12.8"
    assert found["nvcc-unsupported-arch"]["numbers"] == {"arch_cc": "7.0"}
    for m in found.values():  # the machine confirms every one, by the cuda-pairing check
        assert m["confirmation"]["verdict"] == "confirmed", m
        assert m["confirmation"]["check"] == "cuda-pairing"
        assert "has no kernel for sm_70" in m["confirmation"]["reason"]
    assert unexplained(doc) == [
        ("error", 19, "ERROR: pip's dependency resolver does not currently take into account all the packages that are "
                      "installed. This behaviour is the source of the following dependency conflicts."),
        ("warning", 22, "WARNING: Running pip as the 'root' user can result in broken permissions and conflicting "
                        "behaviour with the system package manager. It is recommended to use a virtual environment "
                        "instead: https://pip.pypa.io/warnings/venv"),
        ("error", 43, doc["unexplained"]["groups"][2]["example"]),
        ("error", 44, "FAILED: q_matrix.cuda.o"),
        ("error", 46, "ninja: build stopped: subcommand failed."),
    ]
    assert doc["unexplained"]["groups"][2]["example"].startswith("RuntimeError: Error building extension 'exllamav2_ext'")
    assert (doc["unexplained"]["error_lines"], doc["unexplained"]["warning_lines"]) == (4, 1)
    assert code == 2


def test_oom_at_max_seq_len_32768():
    doc, code = explain_json("oom-max-seq-len-32768.log", "--replay", V100_CU130)
    found = by_signature(doc)
    assert set(found) == {"tabbyapi-compatibility-mode", "cuda-oom"}
    oom = found["cuda-oom"]
    assert oom["first_line"] == 28 and oom["checks"] == ["memory-budget", "gpu-processes"]
    assert oom["numbers"] == {"tried_mib": 64.0, "gpu_index": 0, "total_mib": 16148.48, "free_mib": 52.19,
                              "in_use_mib": 16087.04, "torch_allocated_mib": 15595.52}
    assert {(h["field"], h["value"], h["line"]) for h in doc["plan_hints"]} == {("max_seq_len", 32768, 1), ("cache_mode", "fp16", 1)}
    assert doc["plan_used"]["max_seq_len"] == 32768 and doc["plan_used"]["cache_mode"] == "fp16"
    verdict = oom["confirmation"]
    if "memory-budget" not in check_ids():
        assert verdict["verdict"] == "cannot-tell"
    else:  # without the model directory the budget cannot be computed, and a pass must not rule the OOM out
        assert verdict["verdict"] != "ruled-out" and "memory-budget" in verdict["reason"]
    assert unexplained(doc) == []
    assert code == 2


def test_a_log_from_another_card_is_not_judged_on_this_one():
    doc, _ = explain_json("pip-torch-cu130-v100.log", "--replay", str(MACHINES / "t4-flash-attn-2.json"))
    warning = by_signature(doc)["torch-capability-cc-list"]["confirmation"]
    assert warning["verdict"] == "cannot-tell"
    assert warning["reason"].startswith("the log is from a cc 7.0 card and this GPU 0 is cc 7.5")


def test_no_live_only_reads_the_log_and_the_command_line_beats_the_log():
    doc, code = explain_json("oom-max-seq-len-32768.log", "--no-live", "--max-seq-len", "8192")
    assert all(m["confirmation"] is None for m in doc["matches"])
    assert doc["facts_source"] == "not gathered (--no-live)"
    assert doc["plan_used"]["max_seq_len"] == 8192 and doc["plan_used"]["cache_mode"] == "fp16"
    assert code == 2


def test_text_and_markdown_show_line_pitfall_fix_and_verdict():
    text = run_cli("explain", str(LOGS / "pip-torch-cu130-v100.log"), "--replay", V100_CU130)
    assert "[✗] line 45: nvcc fatal   : Unsupported gpu architecture 'compute_70'" in text.stdout
    assert "machine: confirmed: cuda-pairing failed: torch 2.11.0+cu130 has no kernel for sm_70" in text.stdout
    assert "fix: Build with a CUDA 12.x toolkit" in text.stdout
    assert "line 19 error, not recognised: ERROR: pip's dependency resolver" in text.stdout
    md = run_cli("explain", str(LOGS / "pip-torch-cu130-v100.log"), "--replay", V100_CU130, "--markdown")
    assert "| ✗ | 45 | `cuda-pairing` | confirmed | `Unsupported gpu architecture 'compute_70'` |" in md.stdout
    assert "<details><summary>Fixes and evidence</summary>" in md.stdout


def test_stdin_and_output_file(tmp_path):
    out = tmp_path / "analysis.json"
    log = (LOGS / "tabbyapi-v100-startup.log").read_text()
    proc = run_cli("explain", "-", "--no-live", "-o", str(out), input=log)
    assert proc.returncode == 2, proc.stderr
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, SCHEMA)
    assert doc["log"]["name"] == "<stdin>" and len(doc["matches"]) == 3


def test_a_clean_log_exits_0_and_gathers_nothing(tmp_path):
    log = tmp_path / "ok.log"
    log.write_text("INFO:     Loading model modules 100% 65/65\nINFO:     Metrics: 512 tokens generated in 8.1 seconds\n")
    proc = run_cli("explain", str(log))
    assert proc.returncode == 0, proc.stderr
    assert "gathering" not in proc.stderr and "facts: not needed" in proc.stdout


@pytest.mark.parametrize("flag", ["--json", "--markdown"])
def test_help_and_bad_flags(flag):
    assert run_cli("explain", "--help").returncode == 0
    bad = run_cli("explain", str(LOGS / "oom-max-seq-len-32768.log"), flag, "--no-live", "--replay", V100_CU130)
    assert bad.returncode == 3 and "not allowed with argument" in bad.stderr


def test_the_engine_and_its_evidence_lines_are_in_the_json_and_redacted_like_the_log(tmp_path):
    """Issue 35: which engine, and the lines that showed it; those lines are the log's, so a secret in them is hidden."""
    log = tmp_path / "ollama.log"
    log.write_text("time=2026-07-21T10:02:14.205+02:00 level=INFO source=images.go:476 msg=\"total blobs: 9\" "
                   "HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123456789\n"
                   "time=2026-07-21T10:02:15.904+02:00 level=INFO source=gpu.go:377 msg=\"no compatible GPUs were "
                   "discovered\"\n")
    proc = run_cli("explain", str(log), "--json", "--no-live")
    doc = json.loads(proc.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert doc["engine"]["engine"] == "ollama" and doc["engine"]["lines"][0]["line"] == 1
    assert "hf_abcdefghijklmnopqrstuvwxyz0123456789" not in proc.stdout
    text = run_cli("explain", str(log), "--no-live").stdout
    assert "engine: Ollama, from the log's own lines (line 1: Ollama's logfmt lines" in text
