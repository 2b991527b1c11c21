"""Issue 29: the TUI's first frame (header, check list, footer keys) waits for nothing it does not show: the launch
imports neither the report model, the pipeline nor gathering; once the frame is up the checks' worker starts at
once and its ChecksChosen fills the list (pending marks) while the checks still run; the hidden probe and verdict
panels and the CLI's imports for a quit's -o come after the list. benchmarks/tui_startup.py times both moments
on a pseudo-terminal."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest
from conftest import MACHINES, ROOT
from tui_support import HEALTHY, fixture_session, live_without_gpu, run_app, settle

from doctor.facts.replay import load_document
from doctor.facts.source import GatherOptions
from doctor.model.source import ThisMachine
from doctor.run.run import Run
from doctor.run.session import Session
from doctor.tui.app import DoctorApp
from doctor.tui.checklist import PENDING

AFTER_THE_FRAME = ("doctor.model.report", "doctor.facts.replay", "doctor.run.pipeline", "doctor.facts.gather",
                   "doctor.cli.interrupted", "checks.env")


def test_the_launch_imports_nothing_the_first_frame_does_not_show():
    probe = ("import sys, doctor.cli.main, doctor.cli.tui, doctor.tui.app; "
             f"print(sorted(m for m in {AFTER_THE_FRAME!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("session", [lambda: fixture_session(HEALTHY), lambda: live_without_gpu()], ids=["replay", "live"])
def test_what_the_first_frame_does_not_show_comes_after_the_check_list(session):
    seen: list[tuple] = []
    app = DoctorApp(session())

    def after() -> None:  # the CLI's hook (the imports a quit needs), set before the app starts, as the CLI does
        seen.append((app._checks_worker, [k.description for k in app.main_screen.query("FooterKey")],
                     app.checklist.check_ids))

    app.after_first_frame = after

    async def script(app, pilot):
        await settle(app, pilot)
        row = app.main_screen.query_one("#probe-row")
        return app.report, bool(row.query("VerdictPanel")), row.display

    report, mounted, shown = run_app(app, script)
    assert report is not None and len(seen) == 1, seen  # once, and the checks then ran
    worker, keys, listed = seen[0]
    assert worker is not None  # the checks' worker started first: its ChecksChosen fills the list
    assert listed and "compute-capability" in listed  # the list's lines were drawn before the hook's work
    assert "Quit" in keys and "Open" in keys  # the footer's keys were drawn first
    assert mounted and not shown  # the verdict panel: mounted after the first frame, hidden until a probe


def slow_live_session(release: threading.Event) -> Session:
    """A live run whose gathering (a stand-in for NVML and the torch child) waits until the test lets it go."""
    loaded = load_document(str(MACHINES / "no-nvml.json"))

    def slow_reader():
        assert release.wait(30), "the test never let the gathering finish"
        return loaded.facts

    return Session(run=Run(ThisMachine(), options=GatherOptions(reader=slow_reader)))


def test_the_check_list_shows_its_pending_lines_before_the_checks_finish():
    """The list's lines come from the Run's first ChecksChosen, while the facts are still being gathered; the
    final list keeps every line shown first (a line never disappears silently)."""
    release = threading.Event()
    app = DoctorApp(slow_live_session(release))

    async def script(app, pilot):
        for _ in range(500):
            if app.checklist.check_ids:
                break
            await pilot.pause(0.01)
        shown = app.checklist.shown_ids
        first = (shown, {app.checklist.symbol_of(c) for c in shown}, app.report, app.banner.status)
        release.set()
        await settle(app, pilot)
        return first, app.checklist.check_ids, app.report

    (ids, marks, report_then, status), final_ids, report = run_app(app, script)
    assert report_then is None and status.startswith("gathering facts")  # the gathering was still held
    assert "compute-capability" in ids and len(ids) > 5, ids
    assert marks == {PENDING}, marks  # every line pending: none has run yet
    assert report is not None
    assert [c for c in final_ids if c in ids] == ids  # nothing shown first went away, the order kept
    assert {f.id for f in report.findings} >= set(ids)  # each line shown first is a check that ran


def test_a_quit_while_the_hidden_panels_mount_ends_cleanly():
    """The panels mount after the first frame; an app that ends in that moment (q, a hang-up) never draws them:
    drawing them then raised NoMatches, which the CLI reports as an internal error (exit 4)."""
    import asyncio

    app = DoctorApp(fixture_session(HEALTHY))
    app.after_first_frame = app.exit  # right after _probe_panels() mounted them

    async def main():
        async with app.run_test() as pilot:
            for _ in range(200):
                if not app.is_running:
                    break
                await pilot.pause(0.02)

    asyncio.run(asyncio.wait_for(main(), 30))
    assert app.return_code in (0, None) and app._exception is None
