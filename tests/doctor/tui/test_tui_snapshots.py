"""Snapshot tests of the main screen (pytest-textual-snapshot). Update after a deliberate change with
`python3 -m pytest tests/test_tui_snapshots.py --snapshot-update`, then look at the SVGs before committing.

The sessions run the environment checks only, so a check added to the registry by another group
does not change these pictures.
"""

from __future__ import annotations

import pytest
from tui_support import HEALTHY, TORCH_211, fixture_session, live_without_gpu, settle

from doctor.tui.app import DoctorApp


async def checks_finished(pilot) -> None:
    await settle(pilot.app, pilot)


def test_main_screen_healthy_v100(snap_compare):
    assert snap_compare(DoctorApp(fixture_session(HEALTHY)), run_before=checks_finished)


def test_main_screen_v100_with_torch_211_fails_cuda_pairing(snap_compare):
    assert snap_compare(DoctorApp(fixture_session(TORCH_211)), run_before=checks_finished)  # opens on the failure


def test_main_screen_after_a_finished_probe_on_a_throttled_v100(snap_compare):
    from probe_wire import EVENTS
    from tui_support import recorded_probe

    from doctor.model.events import ProbeFinished, ProbePhase, ProbeProgress, ProbeRate
    from doctor.run.probe_stage import with_probe

    probe = recorded_probe("v100-throttled")

    def replayed_probe(report, on_event, cancel):  # its phases, then its own runs and readings
        for event in EVENTS:
            if isinstance(event, (ProbePhase, ProbeProgress)):
                on_event(event)
        for run in probe.result.reported.runs:
            on_event(ProbeRate(run.tok_s))
        on_event(ProbeFinished(probe.summary))
        return with_probe(report, probe)

    async def probed(pilot) -> None:
        await checks_finished(pilot)
        await pilot.press("p")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    assert snap_compare(DoctorApp(fixture_session(HEALTHY, run_probe=replayed_probe)), run_before=probed)


# Issue 13: each at 80x24 and, one pane, at 60x15.
SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((60, 15), id="60x15")]


@pytest.mark.parametrize("size", SIZES)
def test_live_run_without_a_gpu_points_at_target_gpu_and_demo(snap_compare, size):
    assert snap_compare(DoctorApp(live_without_gpu()), run_before=checks_finished, terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_failing_replay_opens_on_the_failure(snap_compare, size):
    assert snap_compare(DoctorApp(fixture_session(TORCH_211, checks=None)), run_before=checks_finished,
                        terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_story_view(snap_compare, size):
    from doctor.run.session import story_session

    assert snap_compare(DoctorApp(story_session()), run_before=lambda pilot: pilot.pause(), terminal_size=size)
