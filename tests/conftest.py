"""Shared test helpers: fixture paths, replaying a fixture through the real CLI, schema validation."""

from __future__ import annotations

import atexit
import json
import locale
import os
import subprocess
import sys
from pathlib import Path

import pytest
from doctor_forkserver import DoctorForkServer

ROOT = Path(__file__).resolve().parents[1]
MACHINES = ROOT / "fixtures" / "machines"


def pytest_configure(config: pytest.Config) -> None:
    """Compile the doctor's modules once, before any test runs. The suite starts hundreds of `python -m doctor`
    children; where PYTHONDONTWRITEBYTECODE is set (as on this project's CI machine) none of them writes what it
    compiled, so in a fresh clone each child compiled the ~150 modules it imports from source again (~0.06 s of CPU
    each). The children still import exactly the same source: a .pyc is used only while it matches its .py."""
    _quicker_textual_idle()
    if "PYTEST_XDIST_WORKER" in os.environ:
        return  # the controller compiled them before it started the workers
    import compileall

    for package in ("doctor", "checks"):
        compileall.compile_dir(ROOT / package, quiet=1)


def _quicker_textual_idle() -> None:
    """Let Pilot find the app idle in 5 ms windows instead of 20. Every `pilot.press` and `pilot.pause()` sleeps in
    such windows until the process used under 5% of one (textual._wait.wait_for_idle), at least three per key: the TUI
    tests spent ~45 s of the suite's wall time asleep there (issue 26: the suite under 150 s on 2 cores). Idle is
    judged the same way (the same 5% of a window); a test that needs more than "the keys were handled" waits for its
    own condition (tui_support.until). textual is pinned in the test extra, so the names below exist; a GPU machine
    that runs only `-m gpu` may not have it (the device's image has no textual)."""
    try:
        import textual._wait
    except ImportError:
        return

    textual._wait.SLEEP_GRANULARITY = 1 / 200
    textual._wait.SLEEP_IDLE = textual._wait.SLEEP_GRANULARITY / 20


_servers: dict[str, DoctorForkServer] = {}  # at most one: for the environment of the first run without env=


def run_cli(*args: str, env: dict | None = None, timeout: float = 60, input: str | None = None) -> subprocess.CompletedProcess:
    """Run `python -m doctor ARGS` as a user would, in a child process. With the tests' usual environment the child
    is forked from a server that has imported the doctor once (doctor_forkserver.py); a test that sets variables of
    its own gets a fresh interpreter, since the imports may read them."""
    full_env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}  # (pytest's own, per test)
    full_env.update(env or {})
    if not _servers and not env:
        _servers["env"] = DoctorForkServer(full_env, ROOT)
        atexit.register(_servers["env"].close)
    server = _servers.get("env")
    if server is None or full_env != server.env:
        return subprocess.run([sys.executable, "-m", "doctor", *args], capture_output=True, text=True,
                              timeout=timeout, env=full_env, cwd=ROOT, input=input)
    encoding = locale.getpreferredencoding(False)  # what text=True decodes with, newlines translated as it does
    done = server.run(list(args), timeout, None if input is None else input.encode(encoding))
    text = [b.decode(encoding).replace("\r\n", "\n").replace("\r", "\n") for b in (done.stdout, done.stderr)]
    return subprocess.CompletedProcess(done.args, done.returncode, *text)


@pytest.fixture(scope="session")
def report_schema() -> dict:
    return json.loads((ROOT / "doctor" / "schema" / "report-1.json").read_text())


@pytest.fixture
def validate(report_schema):
    import jsonschema

    def _validate(doc: dict) -> dict:
        jsonschema.validate(doc, report_schema)
        return doc

    return _validate
