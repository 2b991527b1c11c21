"""Strings from NVML, a model directory's name or a replayed report never reach the terminal raw: OSC 52, a title
change, a screen clear or a C1 CSI is shown (text), escaped (JSON) or dropped (TUI), and Markdown stays inside its
table cell, code span and collapsible block whatever the string holds."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import MACHINES
from robust_support import _env

FIXTURE = MACHINES / "v100-torch-2.11-cu130.json"
HOSTILE = "Tesla V100\x1b]52;c;cHduZWQ=\x07\x1b]0;pwned\x07\x1b[2J\x9b2J</details><h1>owned</h1>|`x`"
RAW = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")  # C0 controls (tab and newline aside), C1 in UTF-8


def _doctor(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "doctor", *args], capture_output=True, env=_env(tmp), cwd=tmp,
                          timeout=60)


@pytest.fixture
def report(tmp_path) -> Path:
    doc = json.loads(FIXTURE.read_text())
    doc["facts"]["nvml"]["gpus"][0]["name"] = HOSTILE
    doc["facts"]["host"]["hostname"] = "box\x1b[2J"
    p = tmp_path / "hostile.json"
    p.write_text(json.dumps(doc))
    return p


@pytest.mark.parametrize("fmt", [[], ["--json"], ["--markdown"], ["-v"]])
def test_a_replayed_report_reaches_the_terminal_shown_not_obeyed(tmp_path, report, fmt):
    r = _doctor(tmp_path, "--replay", str(report), "--no-redact", *fmt)
    assert r.returncode == 2, r.stderr
    assert not RAW.search(r.stdout), RAW.search(r.stdout)
    if fmt == ["--json"]:
        gpu = json.loads(r.stdout)["facts"]["nvml"]["gpus"][0]
        assert gpu["name"] == HOSTILE  # the same JSON, only written with escapes
    if fmt == ["--markdown"]:
        md = r.stdout.decode()
        assert "</details><h1>" not in md and "&lt;/details&gt;&lt;h1&gt;" in md
        assert md.count("<details>") == md.count("</details>")


@pytest.mark.parametrize("fmt", [[], ["--json"], ["--markdown"]])
def test_fleet_shows_hostile_names(tmp_path, report, fmt):
    r = _doctor(tmp_path, "fleet", str(report), "--no-redact", *fmt)
    assert r.returncode == 2, r.stderr
    assert not RAW.search(r.stdout)
    if fmt == ["--markdown"]:
        assert "</details>" not in r.stdout.decode() and "<h1>" not in r.stdout.decode()


def test_a_model_directory_name_is_shown(tmp_path):
    model = tmp_path / "m\x1b]52;c;cHduZWQ=\x07odel"
    model.mkdir()
    r = _doctor(tmp_path, "--replay", str(FIXTURE), "--model", str(model))
    assert r.returncode in (2, 3) and not RAW.search(r.stdout) and not RAW.search(r.stderr), (r.stdout, r.stderr)


def test_explain_markdown_code_spans_hold_backticks_and_html(tmp_path):
    log = tmp_path / "log.txt"
    log.write_text("RuntimeError: CUDA error: no kernel image is available for execution on the device ``` `x` </details><h1>y\n"
                   "ERROR: something unknown went wrong ``` </details> `z`\n")
    r = _doctor(tmp_path, "explain", str(log), "--no-live", "--markdown", "--no-redact")
    md = r.stdout.decode()
    outside_code = [re.sub(r"(`+).+?\1", "", line) for line in md.splitlines()]  # code spans show HTML as text
    assert not [line for line in outside_code if "<h1>" in line or "</details>" in line.replace("</details>", "", 1)]
    closers = [line for line in outside_code if "</details>" in line]
    assert set(closers) == {"</details>"} and len(closers) == md.count("<details>"), md
    for line in md.splitlines():  # every code span is closed by a run as long as the one that opened it
        if line.startswith(("| ", "- line")) and ("no kernel image" in line or "ERROR" in line):
            cell = line.split(" | ")[-1] if line.startswith("| ") else line.split(": ", 1)[1]
            ticks = re.match(r"`+", cell).group()
            body = cell.rstrip(" |")[len(ticks):-len(ticks)]
            assert cell.rstrip(" |").endswith(ticks) and ticks not in re.findall(r"`+", body), cell

