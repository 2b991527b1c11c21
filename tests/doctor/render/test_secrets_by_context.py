"""A secret given by context, with no vendor prefix (an AWS secret access key after a key word), is redacted in
every form a log or config carries it: key=value, key: value, "key": "value", and prose (issue 39). Ordinary log
lines with the same words and long values that are not random stay as they are; the doctor's prose is never touched."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

from doctor.render.redact import SECRET, Redactor, high_entropy

AWS = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
HEX = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"
FORMS = [
    f"2026-12-04 10:01:02 INFO uploader: using secret {AWS} for the s3 sync",
    f"aws_secret_access_key = {AWS}",
    f"aws_secret_access_key: {AWS}",
    f'{{"aws_secret_access_key": "{AWS}", "region": "eu-west-1"}}',
    f"export AWS_SECRET_ACCESS_KEY='{AWS}'",
    f"the token {HEX} was refused (401)",
    "password is Zx9!qW3#eR5tY7uI8oP0",
    f"api_key={HEX}",
    f"Authorization: Bearer {AWS}",
    f"client secret: {AWS}.",
]
ORDINARY = [
    "llama_new_context_with_model: n_ctx = 8192, token generation 12.5 tok/s; per token: 12.79 GB",
    "loading tokenizer_config.json and special_tokens_map.json (secret sauce: none)",
    "the password protected zip could not be opened",
    "token ids 12345678901234567890123 decoded",
    "model.layers.0.self_attn.q_proj.weight token_embd.weight output.weight",
    "the secret of CUDA_VISIBLE_DEVICES=GPU-1234abcd is ordering",
    "api key lookup https://huggingface.co/settings/tokens (see the docs)",
    "secret key rotation documented in docs/reference/security.md",
]


@pytest.mark.parametrize("line", FORMS)
def test_each_form_is_redacted(line):
    out = Redactor().text(line)
    assert AWS not in out and HEX not in out and "Zx9!qW3" not in out and SECRET in out, out


@pytest.mark.parametrize("line", ORDINARY)
def test_ordinary_lines_with_the_same_words_stay(line):
    assert Redactor().text(line) == line


@pytest.mark.parametrize("value,random", [(AWS, True), (HEX, True), ("Zx9!qW3#eR5tY7uI8oP0", True),
                                          ("notsecretatallbutlongword", False), ("12345678901234567890", False),
                                          ("tokenizer_config.json", False), ("aaaaaaaaaaaaaaaaaaaa", False)])
def test_high_entropy(value, random):
    assert high_entropy(value) is random


@pytest.mark.parametrize("fmt", ["--json", "--markdown"])
def test_explain_outputs_hold_no_secret_given_by_context(tmp_path, fmt):
    log = tmp_path / "run.log"
    known = "RuntimeError: CUDA error: no kernel image is available for execution on the device"
    log.write_text("\n".join([f"ERROR: upload failed: {line}" for line in FORMS] + [known, "ERROR: upload failed"]) + "\n")
    proc = run_cli("explain", str(log), "--no-live", fmt, "-o", str(tmp_path / "a.json"))
    assert proc.returncode in (1, 2), proc.stderr
    for shown in (proc.stdout, (tmp_path / "a.json").read_text()):
        assert AWS not in shown and HEX not in shown and "Zx9!qW3" not in shown
    if fmt == "--json":
        json.loads(proc.stdout)
    kept = run_cli("explain", str(log), "--no-live", fmt, "--no-redact").stdout
    assert AWS in kept or "wJalr" in kept  # the search above can fail
