"""Ctrl-C while the doctor starts (its modules loading) exits 130 with one line, never a traceback. The SIGINT is
delivered deterministically: an import hook sends it when the entry point imports its first CLI module, then the
doctor runs as `python -m doctor` does."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import MACHINES
from robust_support import _env

FIXTURE = MACHINES / "v100-torch-2.11-cu130.json"
HOOK = """
import builtins, os, runpy, signal, sys
real = builtins.__import__
def hooked(name, *args, **kwargs):
    if name == {module!r} and not getattr(hooked, "fired", False):
        hooked.fired = True
        os.kill(os.getpid(), signal.SIGINT)  # Python raises KeyboardInterrupt at the next instruction: in the import
    return real(name, *args, **kwargs)
builtins.__import__ = hooked
sys.argv = ["v100-doctor", "--replay", {fixture!r}]
runpy.run_module("doctor", run_name="__main__")
"""


@pytest.mark.parametrize("module", ["doctor.cli.options", "doctor.cli.output", "doctor.facts.children"])
def test_ctrl_c_while_the_entry_point_loads_is_130_without_a_traceback(tmp_path, module):
    r = subprocess.run([sys.executable, "-c", HOOK.format(module=module, fixture=str(FIXTURE))],
                       capture_output=True, env=_env(tmp_path), cwd=tmp_path, timeout=60)
    err = r.stderr.decode()
    assert r.returncode == 130, err
    assert "Traceback" not in err and err.strip() == "v100-doctor: interrupted (SIGINT) while starting"
