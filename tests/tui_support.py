"""Shared pieces of the TUI tests: sessions on the machine fixtures, and a probe that is a real child process.

No tests here; the TUI test modules import from it.
"""

from __future__ import annotations

import asyncio
import threading
import time

from conftest import MACHINES

from checks.manifest import ENV_CHECKS
from doctor.facts.replay import load_document
from doctor.facts.source import GatherOptions
from doctor.model.source import SavedFile, ThisMachine
from doctor.run.run import Run
from doctor.run.session import Session
from doctor.tui.app import DoctorApp

HEALTHY = "v100-pcie-16gb-healthy.json"
TORCH_211 = "v100-torch-2.11-cu130.json"


def fixture_session(name: str, checks=ENV_CHECKS, **kw) -> Session:
    """Today's checks on a recorded machine, as `--replay fixtures/machines/NAME` runs them."""
    return Session(run=Run(SavedFile(str(MACHINES / name)), checks=checks), **kw)


def live_without_gpu(checks=None, source=ThisMachine(), **kw) -> Session:
    """A live run on a machine without NVML (a laptop, CI): its facts recorded in fixtures/machines/no-nvml.json."""
    loaded = load_document(str(MACHINES / "no-nvml.json"))
    return Session(run=Run(source, checks=checks, options=GatherOptions(reader=lambda: loaded.facts)), **kw)


def run_app(app: DoctorApp, script, size=(80, 24), timeout_s: float = 60):
    """Run `script(app, pilot)` inside App.run_test() and return what it returns; a hang fails the test."""

    async def main():
        async with app.run_test(size=size) as pilot:
            return await script(app, pilot)

    return asyncio.run(asyncio.wait_for(main(), timeout_s))


async def until(pilot, ready, timeout_s: float = 10.0) -> None:
    """Wait until ready() holds: what a key starts may finish frames later (a screen composed, a footer drawn, a
    scroll animated), and later still on a loaded machine. Returns at the deadline anyway; the test's assert says what
    was missing."""
    deadline = time.monotonic() + timeout_s
    while not ready() and time.monotonic() < deadline:
        await pilot.pause(0.01)


async def settle(app: DoctorApp, pilot, timeout_s: float = 30.0) -> None:
    """Wait until the checks (started once the first frame is painted) have finished and are drawn."""
    deadline = time.monotonic() + timeout_s
    while app.report is None and time.monotonic() < deadline:
        await app.workers.wait_for_complete()
        await pilot.pause(0.01)
    while not app.main_screen.query("VerdictPanel") and time.monotonic() < deadline:
        await pilot.pause(0.01)  # the probe and verdict panels mount after the check list is drawn (issue 29)
    await pilot.pause()


# A probe worker that speaks the real protocol, starts a grandchild (as a JIT build starts nvcc) and then
# hangs, so that only a real cancel can end it.
HANGING_WORKER = r"""
import json, os, subprocess, sys, time
grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
def say(**event):
    print(json.dumps(event), flush=True)
sys.stdin.read()
say(event="phase", phase="start", message="probe worker started", total=None, protocol=1, pid=os.getpid())
say(event="phase", phase="build", message="JIT-building ExLlamaV2", total=47, grandchild=grandchild.pid)
say(event="progress", phase="build", done=12, total=47, unit="objects", message="12 of 47 units compiled")
time.sleep(600)
"""


def hanging_probe(folder, pids: list[int], watchdog: list[str], watchdog_s: float = 20.0):
    """Session.run_probe over the real runner (doctor.probe.runner) with HANGING_WORKER as its worker.

    If nothing cancels it within watchdog_s, the watchdog does (and says so in `watchdog`), so a TUI
    that forgets to cancel fails the test instead of hanging it."""
    import os
    from dataclasses import replace

    from doctor.probe.child import child_env
    from doctor.probe.protocol import ProbeSpec, screen_events
    from doctor.probe.runner import run_probe

    (folder / "hanging_worker.py").write_text(HANGING_WORKER)
    env = child_env({"PYTHONPATH": os.pathsep.join([str(folder), child_env()["PYTHONPATH"]])})

    def run(report, on_event, cancel):
        def seen(event):
            pids.extend(event[k] for k in ("pid", "grandchild") if k in event)
            for typed in screen_events(event):  # as doctor.run.live_probe relays it
                on_event(typed)

        def fire() -> None:
            if not cancel.is_set():
                watchdog.append("fired")
                cancel.set()

        timer = threading.Timer(watchdog_s, fire)
        timer.start()
        try:
            probe = run_probe(ProbeSpec(model_path="/nonexistent"), on_event=seen, cancel=cancel, sampler_factory=None,
                              env=env, worker_module="hanging_worker")
        finally:
            timer.cancel()
        return replace(report, probe=probe)

    return run


def alive(pid: int) -> bool:
    """True while a process exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def wait_gone(pids, timeout: float = 5.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if alive(p)]



def recorded_probe(name: str):
    """A finished probe from fixtures/probes (the verdict's own V100 cases; each fixture says how it was made)."""
    import json

    from conftest import ROOT

    from doctor.model.probe_results import ProbeReport
    from doctor.model.serialize import from_jsonable

    return from_jsonable(ProbeReport, json.loads((ROOT / "fixtures" / "probes" / f"{name}.json").read_text())["probe"])
