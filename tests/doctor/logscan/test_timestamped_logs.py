"""Real logs carry a timestamp on every line (issue 40): explain finds the same in a paste with and without them, and
the scan that keys a line's outcome with its timestamp's digits blanked equals the one that classifies every line.

The timestamped forms are benchmarks/timestamped_logs.py's (the log its speed is measured on): Ollama's logfmt,
journald, vLLM's logger, docker's -t, Python logging's asctime and a seconds stamp, each record's first line stamped."""

from __future__ import annotations

import importlib.util
import io
from dataclasses import asdict

import pytest
from conftest import ROOT

from doctor.commands.log_input import open_log
from doctor.logscan import source
from doctor.logscan.scanner import Scanner

_spec = importlib.util.spec_from_file_location("timestamped_logs", ROOT / "benchmarks" / "timestamped_logs.py")
assert _spec is not None and _spec.loader is not None
stamps = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(stamps)

LOGS = sorted((ROOT / "fixtures" / "logs").rglob("*.log"))


def scan(data: bytes, remember: bool = True) -> dict:
    result = asdict(Scanner(remember=remember).scan(open_log("-", stdin=io.BytesIO(data))))
    result["stats"].pop("seconds"), result["stats"].pop("mb_per_s")
    return result


def findings(result: dict) -> dict:
    """What explain found, less what a timestamp rightly changes: the lines' text (it holds the stamp), the bytes, and
    the engine and the fixes worded for it (a logger's format is evidence of its engine)."""
    stats = {k: v for k, v in result["stats"].items() if k != "bytes"}
    matches = [(m["signature"], m["first_line"], m["count"], m["lines"], m["numbers"]) for m in result["matches"]]
    unexplained = result["unexplained"]
    groups = [(g["kind"], g["first_line"], g["count"], g["lines"]) for g in unexplained["groups"]]
    return dict(stats=stats, matches=sorted(matches), groups=groups, hints=result["plan_hints"],
                counts=(unexplained["error_lines"], unexplained["warning_lines"], unexplained["lines_in_dropped_groups"]))


@pytest.mark.parametrize("style", list(stamps.STYLES))
@pytest.mark.parametrize("path", LOGS, ids=[p.name for p in LOGS])
def test_a_paste_with_timestamps_finds_the_same(path, style):
    plain = path.read_text(encoding="utf-8", errors="replace").rstrip("\n")
    stamped = stamps.Stamper().stamp(plain, style)
    assert stamped != plain or not plain.strip()
    assert findings(scan(stamped.encode() + b"\n")) == findings(scan(plain.encode() + b"\n"))


def timestamped(copies: int) -> bytes:
    files = stamps.pastes()
    return b"".join(piece for piece, _ in zip(stamps.copies(files, 1 << 40), range(copies * len(files))))


def test_timestamped_pastes_remembered_scan_as_classified(monkeypatch):
    """Three times the pastes, each copy of a paste in the next style: every line is seen again with another timestamp.
    Small blocks, so that most are replayed whole."""
    monkeypatch.setattr(source, "CHUNK", 8192)
    data = timestamped(3)
    fast = scan(data)
    assert fast == scan(data, remember=False)
    assert fast["stats"]["matched_lines"] > 100


def test_timestamped_lines_are_classified_once_per_message(monkeypatch):
    """The point of it: a line whose digits matter (a version, sm_NN, a layer count) is classified once per message
    and style, not once per timestamp: 12 more copies of the pastes (every style met by then) add almost none."""
    from doctor.logscan import scanner

    def classified(copies: int) -> int:
        lines: list[bytes] = []
        original = scanner._Run._classify
        monkeypatch.setattr(scanner._Run, "_classify", lambda run, *args: lines.append(args[4]) or original(run, *args))
        Scanner().scan(open_log("-", stdin=io.BytesIO(timestamped(copies))))
        monkeypatch.setattr(scanner._Run, "_classify", original)
        return len(lines)

    once, twice = classified(12), classified(24)
    assert twice < once * 1.1
