"""Issue 13 defect 10: plain text wraps at the terminal's width (100 when not a terminal), on whole words only,
and commands stay one line each."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import select
import struct
import subprocess
import sys
import termios

import pytest
from conftest import MACHINES, ROOT

from doctor.cli.output import MIN_TEXT_WIDTH, text_width
from doctor.facts.replay import load_document
from doctor.model.source import replayed
from doctor.render.text import render_text
from doctor.run.pipeline import diagnose

# a failing V100 with long fixes, a mixed box (per-GPU lines), a healthy one
FIXTURES = ["v100-torch-2.11-cu130.json", "mixed-2080ti-v100.json", "v100-pcie-16gb-healthy.json"]


def report_of(name: str):
    loaded = load_document(str(MACHINES / name))
    return diagnose(loaded.plan, loaded.facts, source=replayed(f"{name}"), note=loaded.note)


def prose(text: str) -> list[str]:
    """The lines that wrap: all but commands (`$ …`, `# …`) and the numbered script's own lines."""
    lines, in_script = [], False
    for line in text.splitlines():
        in_script = in_script or line == "Do this, in this order:"
        if in_script and line.startswith("  ") or line.lstrip().startswith(("$ ", "# ")):
            continue
        lines.append(line)
    return lines


@pytest.mark.parametrize("name", FIXTURES)
@pytest.mark.parametrize("width", [60, 80, 100])
def test_lines_fit_the_width_and_no_word_is_broken(name, width):
    report = report_of(name)
    text, unwrapped = render_text(report, verbose=True, width=width), render_text(report, verbose=True, width=10_000)
    too_long = [l for l in prose(text) if len(l) > width and " " in l.strip()]  # one long word may stand alone
    assert too_long == []
    assert text.split() == unwrapped.split()  # the same words in the same order: none split, none lost
    commands = [l for l in unwrapped.splitlines() if l.lstrip().startswith("$ ")]
    assert all(c in text.splitlines() for c in commands)  # each command whole, on its own line


def test_a_long_fix_wraps_at_80_where_it_was_cut_at_100_before():
    text = render_text(report_of(FIXTURES[0]), width=80)
    assert max(len(l) for l in prose(text)) <= 80 and max(len(l) for l in prose(render_text(report_of(FIXTURES[0])))) > 80


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_width_is_the_terminals_on_a_terminal_and_100_elsewhere(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert text_width(Tty()) == 80 and text_width(io.StringIO()) == 100
    monkeypatch.setenv("COLUMNS", "20")
    assert text_width(Tty()) == MIN_TEXT_WIDTH
    closed = io.StringIO()
    closed.close()
    assert text_width(closed) == 100


def _cli_on_a_terminal(cols: int, *args: str) -> str:
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.Popen([sys.executable, "-m", "doctor", *args], stdin=slave, stdout=slave, stderr=subprocess.DEVNULL,
                            env=env, cwd=ROOT)
    os.close(slave)
    out = b""
    while True:
        if select.select([master], [], [], 30)[0]:
            try:
                chunk = os.read(master, 1 << 16)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        else:
            break
    proc.wait(timeout=30)
    os.close(master)
    return out.decode("utf-8").replace("\r\n", "\n")


def test_the_cli_wraps_at_the_terminals_width_and_at_100_in_a_pipe():
    fixture = str(MACHINES / FIXTURES[0])
    on_80 = prose(_cli_on_a_terminal(80, "--no-tui", "--replay", fixture))
    piped = prose(subprocess.run([sys.executable, "-m", "doctor", "--replay", fixture], capture_output=True, text=True,
                                 cwd=ROOT, timeout=60).stdout)
    assert on_80 and max(len(l) for l in on_80) <= 80
    assert 80 < max(len(l) for l in piped) <= 100


@pytest.mark.parametrize("args", [
    ("explain", "--replay", str(MACHINES / FIXTURES[0]), str(ROOT / "fixtures" / "logs" / "pip-torch-cu130-v100.log")),
    ("demo", "--list"),
])
def test_explain_and_the_demo_list_wrap_at_the_terminals_width_too(args):
    terminal = _cli_on_a_terminal(80, *args)
    piped = subprocess.run([sys.executable, "-m", "doctor", *args], capture_output=True, text=True, cwd=ROOT,
                           timeout=60).stdout
    assert max(len(l) for l in prose(terminal) if " " in l.strip()) <= 80 < max(len(l) for l in prose(piped))
    assert terminal.split() == piped.split()  # the same words: none broken


@pytest.mark.parametrize("name,engine_check", [("no-nvml.json", False), ("h200-live.json", True)])
def test_the_engine_line_points_at_the_engine_check_only_when_it_ran(name, engine_check):
    """Issue 39: with no card (so no engine check), the banner still said "the engine check says what each likely
    engine would do on this card"."""
    from dataclasses import replace

    from doctor.render.common import engine_line

    loaded = load_document(str(MACHINES / name))
    python = replace(loaded.facts.python, packages={k: v for k, v in loaded.facts.python.packages.items()
                                                    if k not in ("exllamav2", "vllm", "transformers")})
    report = diagnose(loaded.plan, replace(loaded.facts, python=python), source=replayed(name))
    assert report.engine_in_force is not None and report.engine_in_force.assumed
    assert (report.finding("engine") is not None) is engine_check
    assert ("the engine check says" in engine_line(report)) is engine_check
