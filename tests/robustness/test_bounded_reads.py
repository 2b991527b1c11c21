"""Reads with limits, through the real CLI: a FIFO, /dev/zero, a billion laughs, YAML 20,000 deep and deep JSON
end in a one-line error or an unreadable fleet row within seconds, never a hang, a traceback or exit 4."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import MACHINES
from robust_support import _env

FIXTURE = MACHINES / "v100-torch-2.11-cu130.json"


def _doctor(tmp: Path, *args: str) -> tuple[subprocess.CompletedProcess, float]:
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "doctor", *args], capture_output=True, env=_env(tmp), cwd=tmp, timeout=30)
    return r, time.monotonic() - t0


def _laughs() -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
    return "\n".join(lines) + "\nmodel: {model_dir: *a9, max_seq_len: 4096}\n"


@pytest.fixture
def hostile(tmp_path) -> Path:
    (tmp_path / "laughs.yml").write_text(_laughs())
    (tmp_path / "deep.yml").write_text("model: " + "[" * 20_000 + "]" * 20_000 + "\n")
    os.mkfifo(tmp_path / "fifo.yml")
    return tmp_path


@pytest.mark.parametrize("name, words", [("laughs.yml", "billion laughs"), ("deep.yml", "nested more than 64"),
                                         ("fifo.yml", "is a FIFO (named pipe)")])
@pytest.mark.parametrize("how", ["--tabby-config", "watch --config"])
def test_a_hostile_yaml_is_one_line_and_exit_3(hostile, name, words, how):
    flag = how.split()
    args = [*flag, str(hostile / name)] + (["--seconds", "1"] if flag[0] == "watch" else ["--replay", str(FIXTURE)])
    r, took = _doctor(hostile, *args)
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode == 3 and words in err and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1 and "lol" not in err and took < 20


def test_fleet_over_a_fifo_dev_zero_and_deep_json_gives_rows(tmp_path):
    folder = tmp_path / "fleet"
    folder.mkdir()
    os.mkfifo(folder / "a.json")
    os.symlink("/dev/zero", folder / "b.json")
    (folder / "c.json").write_text("[" * 100_000 + "]" * 100_000)
    (folder / "d.json").write_bytes(FIXTURE.read_bytes())
    r, took = _doctor(tmp_path, "fleet", str(folder))
    out, err = r.stdout.decode(), r.stderr.decode()
    assert r.returncode == 2 and "Traceback" not in err, err  # the fixture's host fails cuda-pairing
    assert "is a FIFO" in out and "is a character device" in out and "nested more than 64" in out
    assert "3 unreadable" in out and took < 20
