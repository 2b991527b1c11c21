"""fleet over many reports, read by worker processes: every signal, once or twice, at any moment, ends with its
documented exit code (130, 143, 129), one line, no traceback from the doctor or a worker, no hang and no worker left
(issue 39: a second Ctrl-C while the workers stopped hung it, and a worker printed a traceback)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
from conftest import MACHINES, ROOT

pytestmark = [pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals"), pytest.mark.xdist_group("terminal")]

# the doctor as its console script runs it, its workers made slow (0.3 s a report) so that signals land mid-work
SLOW_FLEET = """
import sys, time
sys.argv = ["v100-doctor", "fleet", sys.argv[1], "--jobs", "2"]
import doctor.run.fleet as fleet
fleet.PARALLEL_FROM = 1
real = fleet.rows_for
def slow(source, redact=True):
    time.sleep(0.3)
    return real(source, redact)
fleet.rows_for = slow
from doctor.cli import main
sys.exit(main())
"""
def _env(home) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("V100_DOCTOR", "PYTHON"))}
    return {**env, "HOME": str(home), "PYTHONPATH": str(ROOT), "TERM": "dumb"}


CODE = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    d = tmp_path_factory.mktemp("reports")
    for i in range(40):
        shutil.copy(MACHINES / "v100-pcie-16gb-healthy.json", d / f"host{i}.json")
    return d


@pytest.mark.parametrize("first,second,gap", [
    (signal.SIGINT, None, 0), (signal.SIGINT, signal.SIGINT, 0.0), (signal.SIGINT, signal.SIGINT, 0.02),
    (signal.SIGINT, signal.SIGTERM, 0.05), (signal.SIGTERM, signal.SIGINT, 0.01), (signal.SIGHUP, signal.SIGHUP, 0.005),
], ids=lambda v: getattr(v, "name", str(v)))
def test_signals_to_the_whole_group_while_workers_read(tmp_path, reports, first, second, gap):
    p = subprocess.Popen([sys.executable, "-c", SLOW_FLEET, str(reports)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=_env(tmp_path), start_new_session=True)  # its own group: a terminal's Ctrl-C reaches all of it
    time.sleep(2.0)  # started, the workers forked and reading
    os.killpg(p.pid, first)
    if second is not None:
        time.sleep(gap)
        try:
            os.killpg(p.pid, second)
        except ProcessLookupError:
            pass
    try:
        _, err = p.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        pytest.fail("fleet hung after the signals")
    text = err.decode()
    assert p.returncode == CODE[first], text
    assert "Traceback" not in text and text.strip() == f"v100-doctor: interrupted ({first.name})", text
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:  # every worker killed and reaped with the doctor
        try:
            os.killpg(p.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        os.killpg(p.pid, signal.SIGKILL)
        pytest.fail("a worker outlived the doctor")
