"""The golden cases: every fixture the doctor replays or explains, and the part of its output that is behaviour.

A move of code (issue 36) must leave every case's digest unchanged; a change of behaviour (issue 35) changes the
digests it means to change, and `python3 tests/golden/regen.py` rewrites them so the diff shows what changed.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXPECTED = Path(__file__).resolve().parent / "expected"


def cases() -> list[tuple[str, tuple[str, ...]]]:
    """(case name, the CLI's arguments) for every machine and example fixture (probe fixtures are verdict
    inputs: tests/doctor/verdict) and every log fixture."""
    out: list[tuple[str, tuple[str, ...]]] = []
    for folder in ("fixtures/machines", "doctor/examples", "fixtures/tabby"):
        for path in sorted((ROOT / folder).rglob("*.json")):
            rel = path.relative_to(ROOT).as_posix()
            out.append((rel, ("--replay", rel, "--json")))
    for path in sorted((ROOT / "fixtures/logs").rglob("*.log")):
        rel = path.relative_to(ROOT).as_posix()
        out.append((rel, ("explain", rel, "--no-live", "--json")))
    return out


_VOLATILE = {"duration_ms", "timings_ms", "created_at", "doctor_version", "seconds", "mb_per_s", "prefilter"}


def _strip(value: object) -> object:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def digest(returncode: int, stdout: str) -> dict:
    """The behaviour of one run: its exit code and, for a report, the findings, verdict, prescription and batched-decode
    estimate (not the facts it replayed); for a log analysis, the matches, what was left unexplained and the engine the log showed."""
    try:
        doc = json.loads(stdout)
    except ValueError:
        return {"exit": returncode, "stdout": re.sub(r"\d+\.\d+ s", "N s", stdout)[:2000]}
    if doc.get("schema", "").startswith("v100-doctor/log-analysis"):
        keep = {k: doc.get(k) for k in ("matches", "unexplained", "plan_hints", "engine")}
    else:
        keep = {"findings": [{k: f.get(k) for k in ("id", "status", "summary", "fix", "commands")}
                             for f in doc.get("findings", [])],
                "verdict": doc.get("verdict"), "prescription": doc.get("prescription"),
                "batched_decode": doc.get("batched_decode"),
                "gpus": [{"index": g.get("index"), "findings": [[f.get("id"), f.get("status")] for f in g.get("findings", [])]}
                         for g in doc.get("gpus") or []]}
    return {"exit": returncode, **_strip(keep)}  # type: ignore[dict-item]


def expected_path(name: str) -> Path:
    return EXPECTED / (name.replace("/", "__") + ".json")


def run_case(args: tuple[str, ...]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "doctor", *args], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "HF_HUB_OFFLINE": "1", "NO_COLOR": "1",
                               "PYTHONPATH": str(ROOT)})
