"""SIGINT, SIGTERM and SIGHUP through the real CLI in child processes: `watch` and `probe` exit 128 + the
signal (130/143/129) with the report of what was measured written to -o, and every process the probe
started (the worker's whole process group, a grandchild too) is gone; a signal that lands while a child
is being started is held until the child is known, so it is reaped too."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import ROOT
from robust_support import _env, _model_dir

# timing-sensitive: one pytest-xdist worker runs them in turn (--dist loadgroup)
pytestmark = [pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals"), pytest.mark.xdist_group("terminal")]
SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]
FAKES = ROOT / "tests" / "doctor" / "probe" / "probe_fakes"


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _gone(pids, seconds: float = 5.0) -> list[int]:
    end = time.monotonic() + seconds
    while time.monotonic() < end and any(_alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if _alive(p)]


WATCHED = ROOT / "fixtures" / "samples" / "v100-decode-healthy.json"
WATCH_PARENT = """
import sys
from dataclasses import replace
import doctor.run.pipeline as pipeline
from doctor.facts.replay import load_document

# watch as it is, on a recorded V100's facts (watch refuses at once a machine without a GPU); the sampler is the real one
facts = replace(load_document({facts!r}).facts, samples=None)
pipeline.gather = lambda plan, options=None: facts
from doctor.cli import main
sys.exit(main(["watch", "--seconds", "60", "--json", "-o", {out!r}]))
"""


@pytest.mark.parametrize("sig", SIGNALS)
def test_watch_exits_with_the_signal_and_writes_what_it_sampled(tmp_path, sig):
    out = tmp_path / "watch.json"
    p = subprocess.Popen([sys.executable, "-c", WATCH_PARENT.format(facts=str(WATCHED), out=str(out))],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(tmp_path), cwd=tmp_path)
    seen = [p.stderr.readline() for _ in range(2)]  # "reading the machine", then "watching GPU 0": sampling runs
    assert b"watching" in seen[-1], seen
    p.send_signal(sig)
    _, err = p.communicate(timeout=20)
    assert p.returncode == 128 + sig, err
    assert b"Traceback" not in err
    doc = json.loads(out.read_text())
    by = "" if sig == signal.SIGINT else f" by {signal.Signals(sig).name}"
    assert any(e.startswith(f"interrupted{by} after") for e in doc["errors"]), doc["errors"]


PROBE_PARENT = """
import os, sys
from dataclasses import replace
sys.path.insert(0, {fakes!r})
import doctor.run.probe_stage as stage
from doctor.probe.child import child_env
from doctor.probe.runner import run_probe

# the probe command as it is, except that the stage runs the stand-in worker (no GPU, no torch) in its
# "grandchild" mode: it starts a child of its own, writes both pids, then hangs in the load phase
stage.skip_reason = lambda report, synthetic=False: None
env = child_env({{"PYTHONPATH": os.pathsep.join([{fakes!r}, child_env()["PYTHONPATH"]]), "FAKE_PID_FILE": {pids!r}}})
stage.run_probe = lambda spec, **kw: run_probe(replace(spec, label="grandchild"),
                                               **{{**kw, "env": env, "worker_module": "fake_probe_worker",
                                                  "sampler_factory": None}})
from doctor.cli import main
sys.exit(main(["probe", "--model", {model!r}, "--json", "-o", {out!r}]))
"""


@pytest.mark.parametrize("sig", SIGNALS)
def test_probe_reaps_the_worker_group_and_exits_with_the_signal(tmp_path, sig):
    pids, out = tmp_path / "pids", tmp_path / "probe.json"
    script = PROBE_PARENT.format(fakes=str(FAKES), pids=str(pids), model=str(_model_dir(tmp_path)), out=str(out))
    p = subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=_env(tmp_path), cwd=tmp_path)
    end = time.monotonic() + 30
    while not (pids.exists() and pids.read_text().endswith("\n")) and time.monotonic() < end and p.poll() is None:
        time.sleep(0.05)
    assert pids.exists(), p.communicate(timeout=5)[1]
    worker, grandchild = (int(x) for x in pids.read_text().split())
    said = [p.stderr.readline()]  # the doctor has taken in the load phase (under load it can lag the worker's pids)
    while said[-1] and b"probe: loading" not in said[-1]:
        said.append(p.stderr.readline())
    assert said[-1], said
    p.send_signal(sig)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 128 + sig, err
    assert b"Traceback" not in err
    assert not _gone([worker, grandchild]), "the probe worker or its child outlived the doctor"
    probe = json.loads(out.read_text())["probe"]
    assert probe["status"] == "cancelled" and probe["error_phase"] == "load"
    if sig != signal.SIGINT:
        assert probe["interrupted_by"] == sig and signal.Signals(sig).name in probe["summary"]


HELD_PARENT = """
import os, signal, subprocess, sys
from doctor.facts import children

# a signal that arrives while the child is being started (here: sent by the test itself from inside
# Popen, the moment before it returns) must be raised only once the child is registered
real = subprocess.Popen
class SignalledPopen(real):
    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        os.kill(os.getpid(), signal.SIGTERM)
subprocess.Popen = SignalledPopen
def term(signum, frame):
    raise KeyboardInterrupt
signal.signal(signal.SIGTERM, term)
try:
    with children.interrupts_held():  # as the torch child and the probe worker are started
        proc = children.spawn([sys.executable, "-c", "import time; time.sleep(60)"])
    print("NOT RAISED", flush=True)
except KeyboardInterrupt:
    print("RAISED", len(children._LIVE), flush=True)
    for p in children._LIVE:
        print("PID", p.pid, flush=True)
    children.stop_all()
"""


def test_a_signal_during_a_childs_start_is_held_until_it_is_registered(tmp_path):
    r = subprocess.run([sys.executable, "-c", HELD_PARENT], capture_output=True, text=True, env=_env(tmp_path),
                       cwd=tmp_path, timeout=30)
    assert "RAISED 1" in r.stdout, r.stdout + r.stderr
    pid = int(r.stdout.split("PID")[1].split()[0])
    assert not _gone([pid])


def test_ignoring_interrupts_while_writing_gives_the_handlers_back():
    """An ignored signal is inherited by every later child: after the write, the handlers are the old ones."""
    from doctor.facts.children import interrupts_ignored

    before = [signal.getsignal(s) for s in SIGNALS]
    with interrupts_ignored():
        assert all(signal.getsignal(s) == signal.SIG_IGN for s in SIGNALS)
    assert [signal.getsignal(s) for s in SIGNALS] == before
