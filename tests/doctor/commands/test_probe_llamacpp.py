"""`v100-doctor probe --model FILE.gguf` runs llama.cpp's probe (here a stand-in llama-bench on PATH), not ExLlamaV2's."""

from __future__ import annotations

import json
import os
import stat

from conftest import run_cli
from gguf_support import write_gguf


def bench(tmp_path, body: str):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "llama-bench"
    exe.write_text(f"#!/bin/sh\necho 'load_tensors: offloaded 5/5 layers to GPU' >&2\n{body}\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return {"PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}", "PYTHONPATH": ""}


def test_a_gguf_is_probed_with_llama_cpp(tmp_path):
    model = write_gguf(tmp_path / "m.gguf")
    row = {"n_prompt": 0, "n_gen": 128, "samples_ts": [50.1, 50.3, 50.2]}
    proc = run_cli("probe", "--model", str(model), env=bench(tmp_path, f"echo '{json.dumps(row)}'"))
    assert proc.returncode == 0, proc.stderr
    assert "llama-bench: ok, 50.2 tok/s median of 3 runs" in proc.stdout and "offloaded 5/5 layers" in proc.stdout


def test_an_engine_that_dies_is_said_so_and_fails(tmp_path):
    model = write_gguf(tmp_path / "m.gguf")
    proc = run_cli("probe", "--model", str(model), env=bench(tmp_path, "kill -ABRT $$"))
    assert proc.returncode == 2
    assert "died-silently" in proc.stdout and "SIGABRT" in proc.stdout and "Traceback" not in proc.stderr


def test_json_is_the_json_alone_and_o_writes_it(tmp_path):
    """--json printed the text line before the JSON (stdout did not parse) and -o wrote nothing."""
    model = write_gguf(tmp_path / "m.gguf")
    row = {"n_prompt": 0, "n_gen": 128, "samples_ts": [50.1, 50.3, 50.2]}
    env = bench(tmp_path, f"echo '{json.dumps(row)}'")
    out = tmp_path / "probe.json"
    proc = run_cli("probe", "--model", str(model), "--json", "-o", str(out), env=env)
    assert proc.returncode == 0, proc.stderr
    (first,) = json.loads(proc.stdout)
    assert first["probe"]["median_tok_s"] == 50.2 and json.loads(out.read_text()) == [first]
    assert f"report written to {out}" in proc.stderr
