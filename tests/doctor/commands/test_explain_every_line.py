"""Every error line `explain` quotes carries an explanation or says "not recognised", in text, Markdown and JSON.

Before (issue 39): Ollama's `cuda driver library init failure: 999` was quoted under "Unexplained" with nothing said of
it, while the CPU fallback below it told the reader that "the lines above" explain it. The lines here are of several
engines; some are recognised, some not: the test holds for both, so a row added later keeps it true."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from conftest import ROOT, run_cli

SCHEMA = json.loads((ROOT / "doctor" / "schema" / "log-analysis-1.json").read_text())

LINES = [  # one error line of each engine's own wording, real (the issue quoted) or shaped as the engine prints it
    # Ollama: cuInit's CUresult (https://github.com/ollama/ollama/issues/5453, /9031)
    'time=2024-07-03T13:26:05.135+08:00 level=DEBUG source=gpu.go:517 msg="Unable to load nvcuda" '
    'library=/usr/lib/x86_64-linux-gnu/libcuda.so.535.183.01 error="nvcuda init failure: 999"',
    'time=2025-02-19T04:44:23.228Z level=INFO source=gpu.go:612 msg="Unable to load cudart library '
    '/usr/lib/x86_64-linux-gnu/libcuda.so.570.86.15: cuda driver library init failure: 802"',
    # torch
    "RuntimeError: CUDA error: no kernel image is available for execution on the device",
    # llama.cpp
    "llama_model_load: error loading model: unknown model architecture: 'qwen9moe'",
    # vLLM
    "ValueError: Model architectures ['FooForCausalLM'] are not supported for now. Supported architectures: "
    "dict_keys(['LlamaForCausalLM'])",
    # Transformers
    "ValueError: The checkpoint you are trying to load has model type `qwen9` but Transformers does not recognize "
    "this architecture.",
    # none in particular: nothing known says what these mean
    "RuntimeError: init failure: 4242",
    "ERROR: frobnicator exploded while warming the flux capacitor",
]


def explain(tmp_path: Path, lines: list[str], *args: str) -> str:
    log = tmp_path / "mixed.log"
    log.write_text("\n".join(lines) + "\n")
    proc = run_cli("explain", str(log), "--no-live", *args)
    assert proc.returncode in (0, 1, 2) and "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout


def test_json_gives_every_error_line_an_explanation_or_not_recognised(tmp_path):
    doc = json.loads(explain(tmp_path, LINES, "--json"))
    jsonschema.validate(doc, SCHEMA)
    for number in range(1, len(LINES) + 1):
        known = [m for m in doc["matches"] if number in m["lines"]]
        unknown = [g for g in doc["unexplained"]["groups"] if number in g["lines"]]
        assert known or unknown, f"line {number} is neither explained nor said to be unrecognised"
        assert all(m["title"] and m["fix"] for m in known)
        assert all(g["explanation"].startswith("not recognised") for g in unknown)
    assert any(number in m["lines"] for m in doc["matches"] for number in (1, 2))  # Ollama's init failure: known now


@pytest.mark.parametrize("form", ["text", "markdown"])
def test_every_quoted_line_is_explained_or_says_not_recognised(tmp_path, form):
    out = explain(tmp_path, LINES, *(("--markdown",) if form == "markdown" else ()))
    for line in LINES:
        head = line[:40]
        quoting = [o for o in out.splitlines() if head in o]  # a repeat of a known message is counted, not quoted
        assert quoting or line not in LINES[-2:], f"an unrecognised line is not quoted: {head}"
        for o in quoting:
            known_text = re.match(r"\[[✗!i]\] line \d+: ", o) or o.lstrip().startswith("then ")
            known_md = re.match(r"\| [✗!i] \| \d+ \| ", o)
            assert known_text or known_md or "not recognised" in o, o


def test_a_line_alone_is_said_not_recognised(tmp_path):
    out = explain(tmp_path, ["RuntimeError: init failure: 4242"])
    assert "line 1 error, not recognised: RuntimeError: init failure: 4242" in out
