"""Checks are pure functions of (Facts, Plan), and a replay reads nothing but the report.

Every machine fixture is replayed (without a model, with each fixture model, with a missing and a
shell-split path), its facts gathered first; then every check runs with file, directory, environment
and subprocess access made to raise. A check that touched the machine would end in ERROR (the runner
isolates the exception), so "no ERROR" proves it did not. The last test replays each fixture through
the CLI with an audit hook recording every file the process opens or lists.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import importlib
import io
import os
import pathlib
import pkgutil
import subprocess
import sys
from collections.abc import MutableMapping
from dataclasses import replace

import pytest
from conftest import MACHINES as MACHINE_DIR
from conftest import ROOT

import checks
from checks.registry import all_checks
from checks.runner import run_checks
from doctor.facts.modeldir.directory import gather_model
from doctor.facts.replay import load_document
from doctor.model.findings import Status
from doctor.model.plan import Plan
from doctor.model.plausible import scrub

MACHINES = sorted(MACHINE_DIR.glob("*.json"))
MODELS = sorted(p for p in (ROOT / "fixtures" / "models").iterdir() if p.is_dir())
PATH_IO = ("open", "read_text", "read_bytes", "write_text", "write_bytes", "stat", "lstat", "exists", "is_file",
           "is_dir", "iterdir", "glob", "rglob", "resolve", "expanduser", "touch", "mkdir", "unlink", "samefile")
OS_IO = ("open", "stat", "lstat", "listdir", "scandir", "access", "walk", "getcwd", "readlink")
SUBPROCESS = ("run", "Popen", "call", "check_call", "check_output", "getoutput", "getstatusoutput")


class Touched(AssertionError):
    """A check reached outside its arguments."""


def _forbid(name: str):
    def raiser(*args, **kwargs):
        raise Touched(f"{name}{args!r}")
    return raiser


class _NoEnviron(MutableMapping):
    def __getitem__(self, key): raise Touched(f"os.environ[{key!r}]")
    def __setitem__(self, key, value): raise Touched(f"os.environ[{key!r}] = ...")
    def __delitem__(self, key): raise Touched(f"del os.environ[{key!r}]")
    def __iter__(self): raise Touched("iter(os.environ)")
    def __len__(self): raise Touched("len(os.environ)")
    def __contains__(self, key): raise Touched(f"{key!r} in os.environ")
    def get(self, key, default=None): raise Touched(f"os.environ.get({key!r})")


@contextlib.contextmanager
def no_machine_access():
    """Files, directories, environment and subprocesses all raise Touched while this is active."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(builtins, "open", _forbid("open"))
        mp.setattr(io, "open", _forbid("io.open"))
        for name in OS_IO:
            mp.setattr(os, name, _forbid(f"os.{name}"))
        for name in ("exists", "isfile", "isdir", "islink", "getsize", "expanduser", "realpath", "abspath"):
            mp.setattr(os.path, name, _forbid(f"os.path.{name}"))
        for name in PATH_IO:
            mp.setattr(pathlib.Path, name, _forbid(f"Path.{name}"))
        for name in ("cwd", "home"):
            mp.setattr(pathlib.Path, name, classmethod(_forbid(f"Path.{name}")))
        for name in SUBPROCESS:
            mp.setattr(subprocess, name, _forbid(f"subprocess.{name}"))
        mp.setattr(os, "system", _forbid("os.system"))
        mp.setattr(os, "getenv", _forbid("os.getenv"))
        mp.setattr(os, "environ", _NoEnviron())
        yield


def _import_every_check_module() -> None:
    """Import all of checks/ first: a first import opens files, which is Python's work, not the check's."""
    for mod in pkgutil.walk_packages(checks.__path__, "checks."):
        importlib.import_module(mod.name)


MODEL_CASES = [None, *MODELS, "missing", "split"]


@functools.lru_cache(maxsize=None)
def _model_facts(path: str, parts: tuple[str, ...] | None):
    """Each model directory is gathered once for all machines (the gatherer is not under test here)."""
    return gather_model(path, parts)


def _plan_and_facts(machine, model):
    loaded = load_document(str(machine))
    plan, facts = loaded.plan or Plan(), loaded.facts
    if model == "missing":
        plan = replace(plan, model_path=str(MODELS[0]) + "-nope", max_seq_len=8192)
    elif model == "split":
        parts = (str(ROOT / "fixtures" / "models" / "tiny-exl2"), "copy")  # `--model tiny-exl2 copy`, unquoted
        plan = replace(plan, model_path=" ".join(parts), model_path_parts=parts, max_seq_len=8192)
    elif model is not None:
        plan = replace(plan, model_path=str(model), max_seq_len=8192, cache_mode="q8")
    if plan.model_path:  # the gatherer reads the disk, first
        facts = replace(facts, model=_model_facts(plan.model_path, plan.model_path_parts))
    return plan, scrub(facts)


@pytest.mark.parametrize("machine", MACHINES, ids=[m.stem for m in MACHINES])
def test_every_check_runs_without_touching_the_machine(machine):
    _import_every_check_module()
    for model in MODEL_CASES:
        plan, facts = _plan_and_facts(machine, model)
        with no_machine_access():
            findings = run_checks(facts, plan, all_checks())
        crashed = [f"{f.id}: {f.summary} at {f.evidence.get('where')}" for f in findings if f.status == Status.ERROR]
        assert not crashed, (getattr(model, "name", model), crashed)
        assert len(findings) == len(all_checks())


def test_the_guard_catches_a_check_that_reads_the_disk():
    """The proof above means something only if a reading check would end in ERROR."""
    from checks.base import Check, CheckContext
    from checks.runner import run_one
    from doctor.model.ids import CheckId

    def lister(ctx):
        os.listdir("/")
        raise AssertionError("not reached")

    def env_reader(ctx):
        return os.environ.get("HOME")

    def path_reader(ctx):
        return pathlib.Path("/etc/hostname").exists()

    plan, facts = _plan_and_facts(MACHINES[0], None)
    with no_machine_access():
        for run in (lister, env_reader, path_reader):
            f = run_one(Check(id=CheckId.DTYPE, title="impure", run=run), CheckContext(facts=facts, plan=plan))
            assert f.status == Status.ERROR and "Touched" in f.summary, f.summary
    assert os.path.exists(str(MACHINES[0]))  # and everything is back afterwards


def test_a_missing_path_says_did_you_mean_from_recorded_facts():
    """model-path's near matches come from the gatherer: replayed elsewhere, the report says the same."""
    plan, facts = _plan_and_facts(MACHINES[0], "missing")
    assert facts.model.near_matches and not facts.model.exists
    with no_machine_access():
        finding = next(f for f in run_checks(facts, plan, all_checks()) if f.id == "model-path")
    assert finding.status == Status.FAIL and f"did you mean {facts.model.near_matches[0]!r}" in finding.summary


def test_a_split_path_says_the_first_piece_exists_from_recorded_facts():
    plan, facts = _plan_and_facts(MACHINES[0], "split")
    assert facts.model.first_piece_exists
    with no_machine_access():
        finding = next(f for f in run_checks(facts, plan, all_checks()) if f.id == "model-path")
    assert "exists on its own" in finding.summary


_RECORDING: list[tuple[str, str]] | None = None


def _audit(event: str, args: tuple) -> None:
    if _RECORDING is not None and event in ("open", "os.listdir", "os.scandir", "subprocess.Popen", "os.system"):
        _RECORDING.append((event, str(args[0]) if args else ""))


@pytest.fixture(scope="module")
def audit_hook():
    sys.addaudithook(_audit)  # hooks cannot be removed; it records only while _RECORDING is a list


def _not_a_new_file(path: str) -> bool:
    """Python's own imports, and a descriptor reopened (its path was recorded when it was opened)."""
    return path.endswith((".py", ".pyc", ".so")) or "__pycache__" in path or path.isdigit()


@pytest.mark.parametrize("machine", MACHINES, ids=[m.stem for m in MACHINES])
def test_a_replay_reads_no_file_but_the_report(machine, audit_hook, capsys):
    global _RECORDING
    from doctor.cli import main

    main(["--replay", str(machine), "--no-tui"])  # once, so every module the replay needs is imported
    capsys.readouterr()
    _RECORDING = []
    try:
        code = main(["--replay", str(machine), "--no-tui"])
    finally:
        seen, _RECORDING = _RECORDING, None
    out = capsys.readouterr().out
    assert code in (0, 1, 2) and "replayed from" in out
    touched = [(e, p) for e, p in seen if not _not_a_new_file(p) and os.path.abspath(p) != str(machine.resolve())]
    assert not touched, touched
    assert any(os.path.abspath(p) == str(machine.resolve()) for e, p in seen if e == "open")  # the hook does see it
