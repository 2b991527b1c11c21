"""The headless core starts fast: it must not import textual or torch."""

from __future__ import annotations

import subprocess
import sys

from conftest import MACHINES, ROOT

PROBE = """
import sys, io, contextlib
import doctor.cli
with contextlib.redirect_stdout(io.StringIO()):
    doctor.cli.main(sys.argv[1:])
bad = sorted(m for m in ("textual", "torch", "rich") if m in sys.modules)
print("IMPORTED:" + ",".join(bad))
"""


def _imported(*args: str) -> str:
    out = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, cwd=ROOT, timeout=60).stdout
    return out.strip().splitlines()[-1]


def test_json_run_imports_neither_textual_nor_torch():
    assert _imported("--json", "--no-tui") == "IMPORTED:"


def test_replay_text_run_imports_neither():
    assert _imported("--replay", str(MACHINES / "v100-pcie-16gb-healthy.json"), "--no-tui") == "IMPORTED:"
