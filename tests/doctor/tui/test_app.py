"""The TUI driven with App.run_test() and Pilot on recorded machine fixtures: states, keys, save, quit."""

from __future__ import annotations

from dataclasses import replace

from conftest import MACHINES
from tui_support import HEALTHY, TORCH_211, alive, fixture_session, hanging_probe, run_app, settle, until, wait_gone

from checks.base import Check
from checks.manifest import ENV_CHECKS
from checks.registry import checks_for
from doctor.cli.options import build_parser
from doctor.cli.tui import session_from_args
from doctor.facts.replay import load_document
from doctor.model.findings import Status
from doctor.model.ids import CheckId
from doctor.model.report import report_to_json
from doctor.model.source import SavedFile, replayed
from doctor.run.pipeline import diagnose
from doctor.run.run import Run
from doctor.run.session import Session
from doctor.tui.app import DoctorApp
from doctor.tui.banner import summary_text


def symbols(app: DoctorApp) -> dict[str, str]:
    return {cid: app.checklist.symbol_of(cid) for cid in app.checklist.findings}


def test_checklist_reaches_expected_states_on_healthy_v100():
    async def script(app, pilot):
        await settle(app, pilot)
        return symbols(app), app.banner.status, app.report

    states, status, report = run_app(DoctorApp(fixture_session(HEALTHY, checks=None)), script)
    assert [c.id for c in checks_for(report.plan)] == list(states)  # every check of the default run finished
    assert {cid: states[cid] for cid in ("gpu-present", "compute-capability", "cuda-pairing")} == \
        {"gpu-present": "✓", "compute-capability": "✓", "cuda-pairing": "✓"}
    assert report.source == replayed(str(MACHINES / HEALTHY)) and "passed" in status


def test_checklist_shows_the_torch_211_failure_and_its_fix():
    async def script(app, pilot):
        await settle(app, pilot)  # it opens on the failure: no key needed
        return symbols(app), app.checklist.highlighted_id, app.detail.finding, app.banner.status

    states, highlighted, shown, status = run_app(DoctorApp(fixture_session(TORCH_211)), script)
    assert states == {"gpu-present": "✓", "compute-capability": "✓", "cuda-pairing": "✗", "flash-attn": "✓"}
    assert highlighted == "cuda-pairing" and shown.status is Status.FAIL
    assert "sm_70" in shown.summary and any("cu126" in c for c in shown.commands)
    assert status.startswith("1 failed")


def test_a_crashing_check_shows_a_skull_and_the_rest_go_on():
    def explode(ctx):
        raise ZeroDivisionError("division by zero")

    crashing = Check(id=CheckId.GPU_TOPOLOGY, title="A check with a bug", run=explode)  # not among ENV_CHECKS
    checks = (ENV_CHECKS[0], crashing, *ENV_CHECKS[1:])

    async def script(app, pilot):
        await settle(app, pilot)  # it opens on the crash: a check with a bug counts as a failure
        return symbols(app), app.detail.finding

    states, shown = run_app(DoctorApp(fixture_session(HEALTHY, checks=checks)), script)
    assert states["gpu-topology"] == "☠"
    assert [states[c.id] for c in ENV_CHECKS] == ["✓", "✓", "✓", "✓"]
    assert shown.id == "gpu-topology" and "ZeroDivisionError" in shown.summary


def test_keys_move_and_enter_opens_the_detail_escape_closes_it():
    async def script(app, pilot):
        await settle(app, pilot)
        seen = [app.checklist.highlighted_id]
        for key in ("down", "j", "up", "k", "j"):
            await pilot.press(key)
            seen.append((app.checklist.highlighted_id, app.detail.finding.id))
        await pilot.press("enter")
        # the footer is recomposed a frame later, and is empty for a moment in between: wait for the detail's keys
        await until(pilot, lambda: "Esc" in footer_keys(app) and "jk Move" not in footer_keys(app))
        opened = (app.screen.maximized is app.detail, app.focused is app.detail, footer_keys(app))
        await pilot.press("escape")
        await until(pilot, lambda: "jk Move" in footer_keys(app))
        back = (app.screen.maximized, app.focused is app.checklist, footer_keys(app))
        await pilot.press("j")  # and j moves again
        return seen, opened, back, app.checklist.highlighted_id

    seen, opened, back, after = run_app(DoctorApp(fixture_session(HEALTHY)), script)
    assert seen == ["gpu-present", ("compute-capability", "compute-capability"), ("cuda-pairing", "cuda-pairing"),
                    ("compute-capability", "compute-capability"), ("gpu-present", "gpu-present"),
                    ("compute-capability", "compute-capability")]
    assert opened[:2] == (True, True) and "Esc" in opened[2] and "jk Move" not in opened[2]
    assert back[:2] == (None, True) and "jk Move" in back[2]  # escape gives the list its focus and keys back
    assert after == "cuda-pairing"


def footer_keys(app) -> str:
    """What the footer shows now: its key hints as one string."""
    return " ".join(f"{k.key_display} {k.description}" for k in app.screen.query("FooterKey"))


def _saved_ticket(tmp_path, findings) -> str:
    """A report saved by an older doctor whose findings differ from what today's checks say on its facts."""
    loaded = load_document(str(MACHINES / TORCH_211))
    report = diagnose(loaded.plan, loaded.facts, checks=ENV_CHECKS)
    path = tmp_path / "ticket.json"
    path.write_text(report_to_json(replace(report, findings=findings(report.findings))))
    return str(path)


def test_a_saved_report_shows_todays_checks_on_its_facts_and_p_is_read_only(tmp_path):
    """One meaning of replay (issue 22): the TUI on a saved report shows what `--replay FILE --no-tui` prints,
    today's checks on the recorded facts, not the findings the file kept."""
    path = _saved_ticket(tmp_path, lambda fs: fs[:3] + (replace(fs[3], status=Status.WARN, summary="as recorded"),))

    async def script(app, pilot):
        await settle(app, pilot)
        await pilot.press("p")
        await pilot.pause()
        return symbols(app), app.banner.source, [n.message for n in app._notifications]

    session = session_from_args(build_parser().parse_args(["--replay", path]), ENV_CHECKS)
    states, source, notes = run_app(DoctorApp(session), script)
    assert states["flash-attn"] != "!" and states["cuda-pairing"] == "✗"
    assert "replayed from ticket.json" in source and "today's checks" in source
    assert len(notes) == 1 and "read-only" in notes[0]  # no probe started on this machine


def test_r_reruns_the_same_replay_and_finds_the_same(tmp_path):
    path = _saved_ticket(tmp_path, lambda fs: tuple(replace(f, status=Status.PASS) for f in fs))

    async def script(app, pilot):
        await settle(app, pilot)
        before = symbols(app)["cuda-pairing"]
        await pilot.press("r")
        await pilot.pause()
        await settle(app, pilot)
        return before, symbols(app)["cuda-pairing"]

    session = Session(run=Run(SavedFile(path), checks=ENV_CHECKS))
    assert run_app(DoctorApp(session), script) == ("✗", "✗")


def test_q_during_a_probe_cancels_it_and_leaves_no_child_process(tmp_path):
    pids: list[int] = []
    watchdog: list[str] = []

    async def script(app, pilot):
        await settle(app, pilot)
        await pilot.press("p")
        for _ in range(300):  # until the worker has spoken: its build progress is on screen
            await pilot.pause(0.02)
            if app.probe_state.phase == "build" and app.probe_state.done == 12:
                break
        running = [alive(p) for p in pids]
        await pilot.press("q")
        return running, app.probe_state

    app = DoctorApp(fixture_session(HEALTHY, run_probe=hanging_probe(tmp_path, pids, watchdog)))
    running, state = run_app(app, script)
    assert watchdog == []  # q itself cancelled the probe
    assert len(pids) == 2 and running == [True, True]  # the worker and its grandchild were up
    assert (state.phase, state.done, state.total) == ("build", 12, 47)
    assert wait_gone(pids) == []  # no orphan: the runner killed the worker's whole process group
    assert app.return_value is app.report and app.report.probe.status == "cancelled"


def test_p_without_a_probe_says_why():
    async def script(app, pilot):
        await settle(app, pilot)
        await pilot.press("p")
        return [n.message for n in app._notifications], app.query_one("#probe-row").display

    notes, shown = run_app(DoctorApp(fixture_session(HEALTHY, no_probe_reason="the probe is off (--no-probe)")), script)
    assert notes == ["the probe is off (--no-probe)"] and shown is False


def test_no_color_draws_in_grey_only(monkeypatch):
    import re

    monkeypatch.setenv("NO_COLOR", "1")

    async def script(app, pilot):
        await settle(app, pilot)
        return app.no_color, app.export_screenshot()

    no_color, svg = run_app(DoctorApp(fixture_session(TORCH_211)), script)
    colours = set(re.findall(r"fill: #([0-9a-f]{6})", svg)) - {"c5c8c6"}  # the SVG template's own default
    assert no_color and colours and all(c[0:2] == c[2:4] == c[4:6] for c in colours)
    assert "✗" in svg and "✓" in svg  # the states still read without colour


def test_fits_80_by_24_with_every_check_line_and_the_footer_visible():
    async def script(app, pilot):
        await settle(app, pilot)
        lines = app.checklist.option_count
        return app.checklist.scrollable_content_region.height, lines, app.query_one("Footer").region

    height, lines, footer = run_app(DoctorApp(fixture_session(TORCH_211, checks=None)), script)
    assert height >= lines and footer.y == 23 and footer.width == 80


def test_q_while_facts_are_gathered_stops_the_torch_child_and_does_not_wait_for_it(monkeypatch):
    import os
    import signal
    import subprocess
    import sys
    import time

    from doctor.facts.python import torch_facts
    from doctor.model.facts import TorchFacts

    class HangingTorchChild:  # a torch import that would take a minute
        def __init__(self):
            self.proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)

        def kill(self):
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    class SlowTorchGatherer:
        def __init__(self, timeout_s=20.0, fresh=False, **kw):
            self.child = HangingTorchChild()

        def result(self):
            self.child.proc.wait()
            return TorchFacts(installed=True, reason="stopped")

    monkeypatch.setattr(torch_facts, "TorchGatherer", SlowTorchGatherer)

    async def script(app, pilot):
        for _ in range(200):
            await pilot.pause(0.02)
            if app._control is not None and getattr(app._control.gatherer, "child", None) is not None:
                break
        pid = app._control.gatherer.child.proc.pid
        was_alive = alive(pid)
        started = time.monotonic()
        await pilot.press("q")
        return pid, was_alive, time.monotonic() - started

    app = DoctorApp(Session(run=Run(checks=ENV_CHECKS)))  # live: this machine's facts
    pid, was_alive, took = run_app(app, script)
    assert was_alive and wait_gone([pid]) == [] and took < 5
    assert app.return_value is None  # a run cut short is no report


def test_a_dropped_ssh_connection_sighup_cancels_the_probe_like_q(tmp_path):
    import os
    import signal

    pids: list[int] = []
    watchdog: list[str] = []

    async def script(app, pilot):
        await settle(app, pilot)
        await pilot.press("p")
        for _ in range(300):
            await pilot.pause(0.02)
            if app.probe_state.done == 12:
                break
        handled = signal.getsignal(signal.SIGHUP) not in (signal.SIG_DFL, signal.SIG_IGN, None)
        assert handled, "no SIGHUP handler: the signal would kill the doctor and orphan the probe"
        running = [alive(p) for p in pids]
        os.kill(os.getpid(), signal.SIGHUP)  # what the terminal sends when the SSH session goes away
        for _ in range(500):  # the app quits by itself
            if app.return_value is not None:
                break
            await pilot.pause(0.02)
        return running

    from doctor.cli.hangup import SIGNALS, hangup_guard

    app = DoctorApp(fixture_session(HEALTHY, run_probe=hanging_probe(tmp_path, pids, watchdog)))
    before = {sig: signal.getsignal(sig) for sig in SIGNALS}
    try:
        with hangup_guard(within_s=30, end=lambda code: None) as guard:  # as doctor.cli.tui arms it
            guard.on_signal(app.hang_up)
            running = run_app(app, script)
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
    assert running == [True, True] and watchdog == [] and wait_gone(pids) == []
    assert app.report.probe.status == "cancelled" and guard.signum == signal.SIGHUP


def test_banner_names_each_gpu_worst_first_on_a_mixed_box():
    """Issue 15: the TUI's summary carries the per-GPU judgement (the V100 fails, the 2080 Ti passes)."""
    from tui_support import fixture_session, run_app, settle

    from doctor.tui.app import DoctorApp

    async def script(app, pilot):
        await settle(app, pilot)
        return summary_text(app.report)

    text = run_app(DoctorApp(fixture_session("mixed-2080ti-v100.json", checks=None)), script)
    assert "GPUs: ✗ 1 cuda-pairing, ✓ 0" in text


def test_a_failing_gpu_other_than_gpu_0_gets_its_lines_fix_and_route_in_the_tui():
    """Issue 23: on the mixed box the V100 (GPU 1) fails; the list holds its findings, the detail its fix and route."""
    from tui_support import fixture_session, run_app, settle

    from doctor.tui.app import DoctorApp

    async def script(app, pilot):
        await settle(app, pilot)
        assert app.checklist.go_to("gpu1/cuda-pairing")
        await pilot.pause()
        return app.checklist.check_ids, app.detail.finding, summary_text(app.report)

    ids, finding, summary = run_app(DoctorApp(fixture_session("mixed-2080ti-v100.json", checks=None)), script)
    assert "gpu1/cuda-pairing" in ids and "gpu0/cuda-pairing" not in ids
    assert finding.status.value == "fail" and "Tesla V100" in finding.title
    assert "cu126" in finding.fix and any("download.pytorch.org/whl/cu12" in c for c in finding.commands)
    assert summary.startswith("2 failed")  # each check at its worst over the GPUs


def test_messages_still_queued_when_the_screens_are_gone_do_nothing():
    """A quit while the checks' worker posts, a highlight is pending or the first frame's timers wait, tears the
    screens down with those messages and timers still queued: their handlers ran on an empty screen stack and ended the exit in an IndexError (exit 4;
    seen once when a test's script returned while the replay's list was still filling)."""
    from doctor.model.events import ChecksChosen
    from doctor.tui.messages import ChecksListed, RunCrashed

    app = DoctorApp(fixture_session(HEALTHY))

    async def script(app, pilot):
        await settle(app, pilot)
        return app.report

    report = run_app(app, script)
    assert report is not None and not app.screen_stack  # the app has exited: its screens are gone
    app.view.on_option_list_option_highlighted(None)
    app.view.on_input_changed(None)
    app.view._on_checks_listed(ChecksListed(ChecksChosen(checks=(), gathering=False)))
    app.view._on_run_crashed(RunCrashed(RuntimeError("late")))
    app._when_keys_drawn(0)  # timers set around the first frame
    app.action_story()
