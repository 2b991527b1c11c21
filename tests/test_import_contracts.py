"""The import contracts in pyproject.toml can fail: a planted violation of each one makes `lint-imports` report it BROKEN.

A contract that stays KEPT whatever is imported guards nothing. Each plant below is one import line that the design
forbids; they all go into one copy of the package tree, so one `lint-imports` run shows every contract failing, and
each contract's section of the report must name its own plant (not just any broken import). A contract added to
pyproject.toml without a plant here fails the first test: every contract must be BROKEN in the planted copy.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

LINT = "from importlinter.cli import lint_imports_command; lint_imports_command()"

# contract name (as in pyproject.toml) -> the plants that break it: (module file, the line planted in it)
PLANTS: dict[str, tuple[tuple[str, str], ...]] = {
    "The flow: each part imports only the parts below it": (
        ("doctor/model/_planted_upward.py", "import doctor.run.pipeline"),
    ),
    "Gathering never imports checks: facts are read, not judged": (
        ("doctor/facts/_planted_judge.py", "import checks.registry"),
    ),
    "Renderers draw the report's data only: no verdict code, checks, probe or gatherer": (
        ("doctor/render/_planted_verdict.py", "import doctor.verdict.causes"),
        ("doctor/render/_planted_gather.py", "import doctor.facts.gather"),
    ),
    "Checks are pure: no gatherer, probe, screen or renderer": (
        ("checks/_planted_gather.py", "import doctor.facts.gather"),
    ),
    "Checks, knowledge and plan never reach the machine: no process, file system, network, NVML or GPU library": (
        ("checks/_planted_process.py", "import subprocess"),
    ),
    "The TUI is widgets only: it never reaches gathering, checks, the probe or the verdict, even indirectly": (
        ("doctor/tui/_planted_pipeline.py", "import doctor.run.pipeline"),  # indirect: the pipeline gathers and checks
    ),
    "Renderers are independent of each other": (
        ("doctor/render/text.py", "import doctor.render.markdown"),  # appended to an existing renderer
    ),
    "The headless core never imports textual": (
        ("doctor/verdict/_planted_screen.py", "import textual"),
    ),
}


def _lint(cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, COLUMNS="1000", PYTHONPATH=str(cwd))  # one line per contract name; this tree's packages
    return subprocess.run([sys.executable, "-c", LINT, "--no-cache", "--no-logo"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def _statuses(output: str) -> dict[str, str]:
    """Contract name -> KEPT | BROKEN, from the report's summary lines."""
    return {m["name"]: m["status"] for m in re.finditer(r"^(?P<name>\S.*?) (?P<status>KEPT|BROKEN)\b", output, re.M)}


def _section(output: str, name: str) -> str:
    """The broken-contracts report's part about one contract: from its heading to the next heading."""
    report = output.split("Broken contracts", 1)[1]
    start = report.index(f"\n{name}\n")
    nxt = [report.index(f"\n{other}\n", start + 1) for other in PLANTS
           if other != name and f"\n{other}\n" in report[start + 1:]]
    return report[start:min(nxt, default=len(report))]


def _planted_copy(tmp: Path) -> Path:
    for package in ("doctor", "checks"):
        shutil.copytree(ROOT / package, tmp / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(ROOT / "pyproject.toml", tmp / "pyproject.toml")
    for plants in PLANTS.values():
        for path, line in plants:
            target = tmp / path
            before = target.read_text() if target.exists() else '"""Planted by tests/test_import_contracts.py."""\n'
            target.write_text(before + line + "\n")
    return tmp


def test_each_contract_fails_on_its_planted_violation(tmp_path):
    clean = _statuses(_lint(ROOT).stdout)
    assert clean, "lint-imports listed no contract"
    assert set(clean) == set(PLANTS), "every contract in pyproject.toml needs a plant here, and only those"

    run = _lint(_planted_copy(tmp_path))
    assert run.returncode != 0, run.stdout[-2000:] + run.stderr[-2000:]
    statuses = _statuses(run.stdout)
    assert {name for name, status in statuses.items() if status == "BROKEN"} == set(PLANTS), run.stdout[-4000:]
    for name, plants in PLANTS.items():
        section = _section(run.stdout, name)
        for path, line in plants:
            planted = path.removesuffix(".py").replace("/", ".")
            assert planted in section, f"{name}: the plant {planted} ({line}) is not what broke it:\n{section}"


def test_the_tree_keeps_every_contract():
    run = _lint(ROOT)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert set(_statuses(run.stdout).values()) == {"KEPT"}
