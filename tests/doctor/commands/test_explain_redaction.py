"""Every form of `explain`'s output redacts the log's secrets alike: text on the terminal, --markdown, --json and -o
(issue 39: the plain text printed them while --json and --markdown did not). Secrets by shape (hf_, sk-, a JWT) and by
context (a key word before a random value); the doctor's own titles, fixes, sources and commands are never touched,
and --no-redact keeps the log as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli

AWS = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
HF = "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"
OPENAI = "sk-proj-Zq8Xw7Cv6Bn5Mm4Ll3Kk2Jj1Hh0Gg9Ff"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
HEX = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"
SECRETS = (AWS, HF, OPENAI, JWT, HEX)
LINES = [
    # known messages carrying a secret on the same line: the quoted line is redacted, the explanation is not
    f"RuntimeError: CUDA error: no kernel image is available for execution on the device (secret={AWS})",
    f"llama_model_load: error loading model: unknown model architecture: 'qwen9' token: {HF}",
    # unrecognised lines, each form of secret
    f"ERROR: upload failed using secret {AWS} for bucket models",
    f"ERROR: aws_secret_access_key = {AWS}",
    f'ERROR: request rejected {{"api_key": "{OPENAI}"}}',
    f"ERROR: 401 from the hub with Authorization: Bearer {JWT}",
    f"ERROR: HF_TOKEN={HF} was refused",
    f"ERROR: the token {HEX} expired",
]


def log(tmp_path: Path) -> Path:
    path = tmp_path / "server.log"
    path.write_text("\n".join(LINES) + "\n")
    return path


@pytest.mark.parametrize("form", [(), ("--markdown",), ("--json",)], ids=["text", "markdown", "json"])
def test_every_form_holds_no_secret(tmp_path, form):
    out = tmp_path / "analysis.json"
    proc = run_cli("explain", str(log(tmp_path)), "--no-live", *form, "-o", str(out))
    assert proc.returncode in (1, 2) and "Traceback" not in proc.stderr, proc.stderr
    for shown in (proc.stdout, out.read_text()):
        leaked = [s for s in SECRETS if s in shown or s[:12] in shown]
        assert not leaked, leaked
    assert "redacted-secret" in proc.stdout


def test_text_without_o_is_redacted_too(tmp_path):
    proc = run_cli("explain", str(log(tmp_path)), "--no-live")
    assert not [s for s in SECRETS if s[:12] in proc.stdout]
    assert "ERROR: aws_secret_access_key = redacted-secret" in proc.stdout


def test_the_doctors_prose_is_never_redacted(tmp_path):
    """Titles, fixes, sources and commands are the same with and without redaction; only the log's text changes."""
    path = log(tmp_path)
    redacted = json.loads(run_cli("explain", str(path), "--no-live", "--json").stdout)
    kept = json.loads(run_cli("explain", str(path), "--no-live", "--json", "--no-redact").stdout)
    assert redacted["matches"] and len(redacted["matches"]) == len(kept["matches"])
    for a, b in zip(redacted["matches"], kept["matches"]):
        assert (a["title"], a["fix"], a["source"], a["commands"]) == (b["title"], b["fix"], b["source"], b["commands"])
        assert a["signature"] == b["signature"]
    assert any(AWS in m["text"] for m in kept["matches"])  # the redaction above is what removed it
    text = run_cli("explain", str(path), "--no-live").stdout
    assert "llama.cpp stops with \"unknown model architecture\" when its build predates the model" in text


def test_no_redact_keeps_the_log_in_text(tmp_path):
    proc = run_cli("explain", str(log(tmp_path)), "--no-live", "--no-redact")
    assert AWS in proc.stdout and HF in proc.stdout
