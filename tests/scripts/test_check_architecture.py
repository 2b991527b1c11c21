"""scripts/check-architecture can fail: each machine read, forbidden import or upward arrow planted into a copy of the
tree breaks the rule it names, with its file and line, in every kind of module the rule covers (a check, a renderer,
a TUI module, a model module, a gatherer), and leaves alone the kinds it does not (a gatherer reads the machine; the
TUI imports textual). The AST rules run in-process; the script itself (lint-imports included) runs twice: on the tree,
and on one copy holding a plant of each import-contract kind."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

SCRIPT = ROOT / "scripts" / "check-architecture"
_spec = importlib.util.spec_from_file_location("architecture_rules", ROOT / "scripts" / "architecture_rules.py")
assert _spec and _spec.loader
rules = importlib.util.module_from_spec(_spec)
sys.modules["architecture_rules"] = rules
_spec.loader.exec_module(rules)

# the kinds of module, as a new file in each package: its path in the tree
KINDS = {
    "check": "checks/env/_planted.py",
    "renderer": "doctor/render/_planted.py",
    "tui": "doctor/tui/_planted.py",
    "model": "doctor/model/_planted.py",
    "gatherer": "doctor/facts/_planted.py",
}
PURE_KINDS = ("check", "renderer", "model")
# plant -> (the lines planted; the rule it breaks; the kinds it breaks it in). The line marked `# <-` is the one named.
PLANTS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "open": ('text = open("/etc/hostname").read()  # <-', "file-access", PURE_KINDS + ("tui",)),
    "io.FileIO": ('import io\nraw = io.FileIO("/etc/hostname").read()  # <-', "file-access", PURE_KINDS + ("tui",)),
    "io.open": ('import io\nraw = io.open("/etc/hostname").read()  # <-', "file-access", PURE_KINDS + ("tui",)),
    "__import__": ('sp = __import__("subprocess")  # <-', "dynamic-import", PURE_KINDS + ("tui",)),
    "importlib": ('import importlib  # <-\nmod = importlib.import_module("subprocess")', "dynamic-import", PURE_KINDS + ("tui",)),
    "subprocess": ('import subprocess  # <-\nsubprocess.run(["nvidia-smi"])', "process", PURE_KINDS + ("tui",)),
    "socket": ('import socket  # <-\nname = socket.gethostname()', "network", PURE_KINDS + ("tui",)),
    "os.environ": ('import os  # <-\nhome = os.environ["HOME"]', "environment", PURE_KINDS + ("tui",)),
    "from os import environ": ('from os import environ  # <-\nhome = environ["HOME"]', "environment", PURE_KINDS + ("tui",)),
    "ctypes": ('import ctypes  # <-\nlibc = ctypes.CDLL(None)', "native-code", PURE_KINDS + ("tui",)),
    "flash_attn": ('import flash_attn  # <-', "gpu-library", PURE_KINDS + ("tui",)),
    "torch": ('def load():\n    import torch  # <- lazy', "gpu-library", PURE_KINDS + ("tui",)),
    "textual": ('import textual  # <-', "textual-in-core", PURE_KINDS + ("gatherer",)),
    "the CLI": ('from doctor.cli.output import emit  # <-', "imports-cli", PURE_KINDS + ("tui", "gatherer")),
    "a command": ('def run():\n    from doctor.commands import explain  # <-', "imports-cli", PURE_KINDS + ("tui", "gatherer")),
    "checks": ('import checks.registry  # <-', "gatherer-imports-checks", ("gatherer",)),
}
CASES = [(plant, kind) for plant, (_, _, kinds) in PLANTS.items() for kind in kinds]
# a gatherer reads the machine, the TUI draws with textual: these plants break nothing there
ALLOWED_THERE = [("open", "gatherer"), ("subprocess", "gatherer"), ("os.environ", "gatherer"), ("torch", "gatherer"),
                 ("ctypes", "gatherer"), ("socket", "gatherer"), ("textual", "tui")]


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """A copy of the package tree and its contracts, into which each test plants one file."""
    root = tmp_path_factory.mktemp("tree")
    for package in ("doctor", "checks"):
        shutil.copytree(ROOT / package, root / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    return root


def _plant(tree: Path, kind: str, plant: str) -> tuple[Path, int]:
    path = tree / KINDS[kind]
    code = f'"""Planted by tests/scripts/test_check_architecture.py."""\n{PLANTS[plant][0]}\n'
    path.write_text(code)
    return path, next(i for i, text in enumerate(code.splitlines(), 1) if "# <-" in text)


@pytest.mark.parametrize("plant,kind", CASES, ids=[f"{p}-in-{k}" for p, k in CASES])
def test_a_planted_read_breaks_its_rule(tree, plant, kind, capsys):
    path, line = _plant(tree, kind, plant)
    try:
        code = rules.main(["--root", str(tree), "--no-contracts", str(path)])  # the whole tree: the script's tests below
    finally:
        path.unlink()
    out = capsys.readouterr().out
    rule = PLANTS[plant][1]
    rel = path.relative_to(tree).as_posix()
    assert code == 1, out
    assert f"{rel}:{line}: {rule}: " in out, out
    assert len(out.splitlines()) == 1, f"one rule, the most specific, for one plant:\n{out}"


@pytest.mark.parametrize("plant,kind", ALLOWED_THERE, ids=[f"{p}-in-{k}" for p, k in ALLOWED_THERE])
def test_what_a_kind_may_do_breaks_nothing(tree, plant, kind):
    path, _ = _plant(tree, kind, plant)
    try:
        assert rules.check_module(tree, path) == []
    finally:
        path.unlink()


@pytest.mark.parametrize("code,rule", [
    ("from pathlib import Path\n", "file-access"),
    ("def size(path):\n    return len(path.read_bytes())\n", "file-access"),
    ("import posixpath\nseen = posixpath.exists('/etc')\n", "file-access"),
    ("import codecs\nf = codecs.open('/etc/hostname')\n", "file-access"),
    ("import traceback\ntext = traceback.format_exc()\n", "file-access"),
    ("import time\ntime.sleep(1)\n", "pure-allow-list"),
    ("import sys\n", "environment"),
    ("import getpass\n", "environment"),
    ("import yaml\n", "file-access"),
    ("import random\n", "pure-allow-list"),
    ("exec('import subprocess')\n", "dynamic-import"),
    ("import doctor.run.pipeline\n", "project-layer"),
    ("from doctor.facts import gather\n", "project-layer"),
    ("from . import kv_cache\nimport doctor.verdict.build\n", "project-layer"),
])
def test_a_pure_package_keeps_to_its_allow_list(tree, code, rule):
    path = tree / "doctor/knowledge/_planted.py"
    path.write_text(code)
    try:
        assert rule in {b.rule for b in rules.check_module(tree, path)}
    finally:
        path.unlink()


def test_type_checking_imports_and_allowed_modules_break_nothing(tree):
    path = tree / "checks/env/_planted.py"
    path.write_text("from __future__ import annotations\nimport io\nimport json\nimport re\nimport time\n"
                    "from typing import TYPE_CHECKING\nfrom packaging.version import Version\n"
                    "from doctor.engines import base\nfrom doctor.model.facts import Facts\n"
                    "if TYPE_CHECKING:\n    from pathlib import Path\n    import doctor.run.run\n"
                    "buf = io.StringIO()\nstarted = time.perf_counter()\n")
    try:
        assert rules.check_module(tree, path) == []
    finally:
        path.unlink()


def _script(cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT)], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_the_tree_keeps_every_rule():
    run = _script(ROOT)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "all kept" in run.stdout and " 0 import contracts" not in run.stdout


def test_the_script_names_each_broken_contract_and_rule_with_file_and_line(tree):
    """One run of the script (lint-imports and the AST rules) over plants that both parts see."""
    plants = {"checks/env/_planted.py": "import subprocess\nfrom doctor.cli import main\n",
              "doctor/model/_planted.py": "import textual\n",
              "doctor/facts/_planted.py": "import checks.registry\n"}
    for path, code in plants.items():
        (tree / path).write_text(code)
    try:
        run = _script(tree)
    finally:
        for path in plants:
            (tree / path).unlink()
    assert run.returncode == 1, run.stdout + run.stderr
    for expected in ("checks/env/_planted.py:1: process:", "checks/env/_planted.py:2: imports-cli:",
                     "doctor/model/_planted.py:1: textual-in-core:", "doctor/facts/_planted.py:1: gatherer-imports-checks:",
                     "checks/env/_planted.py:1: import-contract: Checks, knowledge and plan never reach the machine",
                     "checks/env/_planted.py:2: import-contract: Checks are pure",
                     "doctor/model/_planted.py:1: import-contract: The headless core never imports textual",
                     "doctor/facts/_planted.py:1: import-contract: Gathering never imports checks"):
        assert expected in run.stdout, f"{expected!r} missing:\n{run.stdout}"


def test_every_rule_is_listed_and_every_pure_package_exists():
    listed = subprocess.run([sys.executable, str(SCRIPT), "--rules"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0 and {line.split(":")[0] for line in listed.stdout.splitlines()} == set(rules.RULES)
    for unit in rules.PURE + tuple(rules.NOT_PURE):
        path = ROOT.joinpath(*unit.split("."))
        assert path.is_dir() or path.with_suffix(".py").is_file(), unit
