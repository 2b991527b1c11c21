"""Issue 29: the TUI's first frame (header, check list, footer keys) waits for nothing it does not show: the launch
imports neither the report model, the pipeline nor gathering (they load once the frame is up, on the main thread
before the checks' worker starts, so a quit never waits on that thread's imports), and the hidden probe and verdict
panels mount after it. benchmarks/tui_startup.py times it on a pseudo-terminal."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import ROOT
from tui_support import HEALTHY, fixture_session, live_without_gpu, run_app, settle

from doctor.tui.app import DoctorApp

AFTER_THE_FRAME = ("doctor.model.report", "doctor.facts.replay", "doctor.run.pipeline", "doctor.facts.gather",
                   "doctor.cli.interrupted", "checks.env")


def test_the_launch_imports_nothing_the_first_frame_does_not_show():
    probe = ("import sys, doctor.cli.main, doctor.cli.tui, doctor.tui.app; "
             f"print(sorted(m for m in {AFTER_THE_FRAME!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("session", [lambda: fixture_session(HEALTHY), lambda: live_without_gpu()], ids=["replay", "live"])
def test_what_the_first_frame_does_not_show_comes_after_it_and_before_the_checks(session):
    seen: list[tuple] = []
    app = DoctorApp(session())

    def after() -> None:  # the CLI's hook (the imports a quit needs), set before the app starts, as the CLI does
        seen.append((app._checks_worker, [k.description for k in app.main_screen.query("FooterKey")]))

    app.after_first_frame = after

    async def script(app, pilot):
        await settle(app, pilot)
        row = app.main_screen.query_one("#probe-row")
        return app.report, bool(row.query("VerdictPanel")), row.display

    report, mounted, shown = run_app(app, script)
    assert report is not None and len(seen) == 1, seen  # once, and the checks then ran
    worker, keys = seen[0]
    assert worker is None  # before the checks' worker started
    assert "Quit" in keys and "Open" in keys  # the footer's keys were drawn first
    assert mounted and not shown  # the verdict panel: mounted after the first frame, hidden until a probe


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
