"""A user's file is never an internal error (exit 4): Infinity in a safetensors header, a lone surrogate in
config.json or a replayed report, TabbyAPI's max_seq_len 10^400, a 300-character file name, and explain's
--model naming nothing. Each ends in a documented code with one line (or a report), never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import MACHINES
from robust_support import _env

FIXTURE = MACHINES / "v100-torch-2.11-cu130.json"
CONFIG = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
          "num_attention_heads": 2, "vocab_size": 100}


def _doctor(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "doctor", *args], capture_output=True, env=_env(tmp), cwd=tmp,
                          timeout=60)


def _model(root: Path, name: str, header: bytes, config: str | None = None) -> Path:
    d = root / name
    d.mkdir()
    (d / "config.json").write_text(config or json.dumps(CONFIG))
    (d / "model.safetensors").write_bytes(len(header).to_bytes(8, "little") + header + b"\0" * 32)
    return d


GOOD_HEADER = b'{"w": {"dtype": "F16", "shape": [4, 4], "data_offsets": [0, 32]}}'


@pytest.fixture
def files(tmp_path) -> Path:
    _model(tmp_path, "inf-shape", b'{"w": {"dtype": "F16", "shape": [Infinity, 4], "data_offsets": [0, 32]}}')
    _model(tmp_path, "inf-offset", b'{"w": {"dtype": "F16", "shape": [4, 4], "data_offsets": [0, Infinity]}}')
    _model(tmp_path, "surrogate", GOOD_HEADER, json.dumps({**CONFIG, "architectures": ["Llama\ud800ForCausalLM"]}))
    doc = json.loads(FIXTURE.read_text())
    doc["facts"]["nvml"]["gpus"][0]["name"] = "Tesla\ud800V100"
    (tmp_path / "surrogate-report.json").write_text(json.dumps(doc))
    (tmp_path / "tabby.yml").write_text(f"model:\n  model_dir: {tmp_path}\n  model_name: surrogate\n"
                                        f"  max_seq_len: 1{'0' * 400}\n")
    (tmp_path / "log.txt").write_text("RuntimeError: CUDA error: no kernel image is available for execution\n")
    return tmp_path


LONG = "x" * 300 + ".json"


@pytest.mark.parametrize("args, codes, words", [
    (["--replay", str(FIXTURE), "--model", "{d}/inf-shape", "--json"], {2}, ""),
    (["--replay", str(FIXTURE), "--model", "{d}/inf-offset"], {2}, "no valid dtype/shape/data_offsets"),
    (["--replay", str(FIXTURE), "--model", "{d}/surrogate", "--json"], {0, 1, 2}, ""),
    (["--replay", str(FIXTURE), "--model", "{d}/surrogate", "--markdown"], {0, 1, 2}, ""),
    (["--replay", "{d}/surrogate-report.json"], {2}, "Tesla\ufffdV100"),
    (["--replay", "{d}/surrogate-report.json", "--json"], {2}, "Tesla"),
    (["--replay", str(FIXTURE), "--tabby-config", "{d}/tabby.yml"], {3}, "max_seq_len: a number with hundreds"),
    (["--replay", LONG], {3}, "File name too long"),
    (["explain", "{d}/log.txt", "--replay", LONG], {3}, "File name too long"),
    (["--replay", str(FIXTURE), "--tabby-config", LONG], {3}, "no such file"),
    (["watch", "--config", LONG, "--seconds", "1"], {3}, "no such file"),
    (["explain", "{d}/log.txt", "--no-live", "--model", "{d}/no/such"], {3}, "no such file or directory"),
])
def test_a_users_file_is_never_exit_4(files, args, codes, words):
    r = _doctor(files, *[a.replace("{d}", str(files)) for a in args])
    out, err = r.stdout.decode("utf-8"), r.stderr.decode("utf-8", "replace")  # stdout is valid UTF-8
    assert r.returncode in codes, err
    assert "Traceback" not in err and "internal error" not in err
    assert words in out + err
    if "--json" in args:
        json.loads(out)


def test_the_main_command_and_explain_agree_on_a_missing_model(files):
    main = _doctor(files, "--replay", str(FIXTURE), "--model", os.path.join(str(files), "no", "such"))
    explain = _doctor(files, "explain", str(files / "log.txt"), "--model", os.path.join(str(files), "no", "such"))
    assert main.returncode == explain.returncode == 3
