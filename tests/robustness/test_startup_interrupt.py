"""Ctrl-C while the doctor starts (its modules loading) exits 130 with one line, never a traceback, from the
doctor package's first instruction on (doctor/__init__.py installs the handler). The SIGINT is delivered
deterministically: an import hook sends it when the entry point imports a given module, then the doctor runs as
`python -m doctor` or the console script does."""

from __future__ import annotations

import signal
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
        os.kill(os.getpid(), signal.SIGINT)  # Python runs the handler at the next instruction: in the import
    return real(name, *args, **kwargs)
builtins.__import__ = hooked
sys.argv = [{argv0!r}, "--replay", {fixture!r}]
{start}
"""
# as `python -m doctor` runs (runpy imports the package while argv[0] is "-m"), and as the console script does
AS_MODULE = ("-m", 'runpy.run_module("doctor", run_name="__main__", alter_sys=True)')
AS_SCRIPT = ("/usr/local/bin/v100-doctor", "import doctor\nfrom doctor.cli import main\nsys.exit(main())")


def _run(tmp_path, module: str, how: tuple[str, str]) -> subprocess.CompletedProcess:
    code = HOOK.format(module=module, fixture=str(FIXTURE), argv0=how[0], start=how[1])
    return subprocess.run([sys.executable, "-c", code], capture_output=True, env=_env(tmp_path), cwd=tmp_path, timeout=60)


@pytest.mark.parametrize("how", [AS_MODULE, AS_SCRIPT], ids=["python-m", "console-script"])
@pytest.mark.parametrize("module", ["doctor.cli", "doctor.cli.main", "doctor.cli.options", "doctor.cli.output",
                                    "doctor.facts.children", "checks.registry"])
def test_ctrl_c_while_the_entry_point_loads_is_130_without_a_traceback(tmp_path, module, how):
    r = _run(tmp_path, module, how)
    err = r.stderr.decode()
    assert r.returncode == 130, err
    assert "Traceback" not in err and err.strip().startswith("v100-doctor: interrupted (SIGINT)"), err


def test_imported_as_a_library_the_package_leaves_sigint_alone(tmp_path):
    code = "import signal, doctor, doctor.cli; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, env=_env(tmp_path), cwd=tmp_path, timeout=60)
    assert r.stdout.decode().strip() == "True", r.stderr.decode()


def test_a_sigint_the_parent_ignores_stays_ignored(tmp_path):
    """nohup and background jobs start the doctor with SIGINT ignored: the start-up guard must not undo that."""
    code = ("import sys; sys.argv = ['v100-doctor']; import signal, doctor; "
            "print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, env=_env(tmp_path), cwd=tmp_path, timeout=60,
                       preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    assert r.stdout.decode().strip() == "True", r.stderr.decode()
