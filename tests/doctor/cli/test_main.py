"""The CLI as a user meets it: exit codes, output formats, and bad input without tracebacks."""

from __future__ import annotations

import json

import pytest
from conftest import MACHINES, run_cli

HEALTHY = str(MACHINES / "v100-pcie-16gb-healthy.json")


def test_no_gpu_here_says_so_and_exits_2():
    proc = run_cli()
    assert proc.returncode == 2
    # a host with no NVIDIA device on its PCI bus (CI) is told so; one with a card but no driver, "No usable"
    assert "No usable NVIDIA GPU" in proc.stdout or "No NVIDIA GPU on this machine" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


def test_json_is_only_json_and_validates(validate):
    proc = run_cli("--json")
    report = validate(json.loads(proc.stdout))
    assert report["schema"] == "v100-doctor/report/1"
    assert report["findings"][0]["id"] == "gpu-present"


def test_markdown_has_collapsible_details():
    proc = run_cli("--replay", HEALTHY, "--markdown")
    assert proc.returncode == 0
    assert "<details>" in proc.stdout and "| ✓ | `cuda-pairing` |" in proc.stdout


def test_output_file_is_written_and_replayable(tmp_path, validate):
    out = tmp_path / "r.json"
    proc = run_cli("--replay", HEALTHY, "-o", str(out))
    assert proc.returncode == 0 and "report written to" in proc.stderr
    validate(json.loads(out.read_text()))
    again = run_cli("--replay", str(out), "--json")  # a saved report replays too
    assert again.returncode == 0


def test_list_checks_in_order():
    proc = run_cli("--list-checks")
    ids = [line.split()[0] for line in proc.stdout.splitlines()]
    assert ids[:4] == ["gpu-present", "compute-capability", "cuda-pairing", "flash-attn"]


def test_single_check():
    report = json.loads(run_cli("--replay", HEALTHY, "--check", "flash-attn", "--json").stdout)
    assert [f["id"] for f in report["findings"]] == ["flash-attn"]


def _bad(tmp_path, name: str, content: bytes | None) -> str:
    p = tmp_path / name
    if content is not None:
        p.write_bytes(content)
    return str(p)


@pytest.mark.parametrize("name, content, message", [
    ("missing.json", None, "no such file"),
    ("garbage.json", b"{not json", "broken JSON at line 1"),
    ("binary.json", b"\x89PNG\r\n\x1a\n\x00\xff\xfe", "not a text file"),
    ("list.json", b"[1, 2]", "not a v100-doctor report"),
    ("other.json", b'{"hello": 1}', "not a v100-doctor report"),
    ("future.json", b'{"schema": "v100-doctor/report/2", "facts": {}}', "newer than this doctor"),
    ("damaged.json", b'{"schema": "v100-doctor/facts/1", "facts": {"gathered_at": "x", "nvml": {"available": "yes"}}}',
     "damaged"),
])
def test_bad_replay_files(tmp_path, name, content, message):
    proc = run_cli("--replay", _bad(tmp_path, name, content))
    assert proc.returncode == 3
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


def test_replay_directory(tmp_path):
    proc = run_cli("--replay", str(tmp_path))
    assert proc.returncode == 3 and "is a directory" in proc.stderr


def test_usage_errors_exit_3():
    assert run_cli("--bogus").returncode == 3
    proc = run_cli("--check", "nope")
    assert proc.returncode == 3 and "unknown check id nope" in proc.stderr
    assert run_cli("--max-seq-len", "-5").returncode == 3


def test_unwritable_output_is_a_usage_error():
    proc = run_cli("--replay", HEALTHY, "-o", "/nonexistent-dir/r.json")
    assert proc.returncode == 3 and "cannot write the report" in proc.stderr


def test_help_documents_exit_codes():
    out = run_cli("--help").stdout
    assert "exit codes:" in out and "3  usage or input error" in out
