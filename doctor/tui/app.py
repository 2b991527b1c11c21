"""The doctor as a screen: the checklist fills in live, each finding opens into its evidence and fix,
the probe shows its progress and live numbers, the verdict is drawn.

A renderer only: checks and probe run in workers through the same pipeline as the text output,
and every line on screen comes from their events or from a saved report.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Footer, OptionList
from textual.worker import Worker, WorkerFailed, WorkerState

from doctor.model.events import CheckEvent, CheckStarted, ProbeEvent, ProbeFailed, ProbePhase
from doctor.render.panels import GPU_READINGS as LIVE_READINGS
from doctor.render.panels import ProbeView, apply_probe_event
from doctor.run.session import Session
from doctor.tui.banner import Banner
from doctor.tui.checklist import Checklist
from doctor.tui.detail import DetailPane
from doctor.tui.probe_panel import ProbePanel
from doctor.tui.save_dialog import SaveDialog
from doctor.tui.verdict_panel import VerdictPanel

if TYPE_CHECKING:  # the report model loads after the first frame (see on_ready)
    from doctor.model.report import Report


FIRST_FRAME_GRACE_S = 0.05
HANGUP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGHUP", "SIGTERM") if hasattr(signal, name))
QUIT_WAIT_S = 5.0  # at most this long for a check run to wind down after its torch child is stopped


class DoctorApp(App["Report | None"]):
    CSS_PATH = "app.tcss"
    TITLE = "v100-doctor"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [
        Binding("q", "quit", "Quit"),  # ctrl+q (textual's own) comes here too
        Binding("p", "probe", "Probe"),
        Binding("r", "rerun", "Re-run"),
        Binding("s", "save_json", "Save"),
        Binding("m", "save_markdown", "Markdown"),
        Binding("c", "copy_fix", "Copy fix"),
    ]

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.report: Report | None = session.saved
        self.probe_state = ProbeView()
        self._probe_cancel = threading.Event()
        self._check_count = 0
        self._torch = None  # the torch-facts child of a live gathering, so quitting can stop it
        self._quitting = False

    # ---- layout -----------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Banner(self._source_text(), id="banner")
        with Horizontal(id="main"):
            yield Checklist(id="checklist")
            yield DetailPane(id="detail")
        with Horizontal(id="probe-row"):
            yield ProbePanel(id="probe")
            yield VerdictPanel(id="verdict")
        yield Footer()

    def on_mount(self) -> None:
        self.checklist.border_title = "Checks"
        self.detail.border_title = "Details"
        self.query_one("#probe-row").display = False
        self.checklist.focus()
        if self.session.saved is not None:
            self._show_saved(self.session.saved)
        self._watch_signals(True)

    def on_unmount(self) -> None:
        self._watch_signals(False)

    def _watch_signals(self, on: bool) -> None:
        """SIGHUP (the SSH connection dropped) or SIGTERM: quit as `q` does, the probe's process group first."""
        loop = asyncio.get_running_loop()
        for sig in HANGUP_SIGNALS:
            try:
                loop.add_signal_handler(sig, self._on_hangup) if on else loop.remove_signal_handler(sig)
            except (NotImplementedError, RuntimeError, ValueError):
                pass  # not the main thread, or no such signals here

    def _on_hangup(self) -> None:
        self._probe_cancel.set()  # at once: the runner stops the worker even if the screen cannot be drawn any more
        self.call_later(self.action_quit)

    def on_ready(self) -> None:
        """The first frame is composed: start the checks a moment later, once textual's writer thread has put it
        on the terminal (the imports and the gathering thread would otherwise hold the GIL against it)."""
        if self.session.saved is None and self.report is None:
            self.set_timer(FIRST_FRAME_GRACE_S, self._start_checks)

    @property
    def checklist(self) -> Checklist:
        return self.query_one(Checklist)

    @property
    def detail(self) -> DetailPane:
        return self.query_one(DetailPane)

    @property
    def banner(self) -> Banner:
        return self.query_one(Banner)

    # ---- checks -----------------------------------------------------------------------------
    def _start_checks(self) -> None:
        from doctor.run.pipeline import default_checks  # the pipeline's own default: model checks only with --model

        checks = self.session.checks if self.session.checks is not None else default_checks(self.session.plan, self.session.facts)
        self._check_count = len(checks)
        self.checklist.reset([(c.id, c.title) for c in checks])
        self.banner.set_status("gathering facts (NVML, Python packages, torch in a child process)…"
                               if self.session.facts is None else f"running checks 0/{len(checks)}…")
        self._show_highlighted()
        self.run_worker(lambda: self._diagnose(checks), thread=True, group="checks", exclusive=True, exit_on_error=False)

    def _diagnose(self, checks) -> Report:
        from doctor.run.pipeline import GatherOptions, diagnose, live_options

        s = self.session
        options = live_options(s.torch_timeout_s, s.fresh, s.use_cache) if s.facts is None else GatherOptions()
        self._torch = options.torch_gatherer
        return diagnose(s.plan, s.facts, source=s.source, note=s.note, checks=checks, options=options,
                        on_event=lambda event: self.call_from_thread(self._on_check_event, event))

    def _on_check_event(self, event: CheckEvent) -> None:
        if isinstance(event, CheckStarted):
            check_id = event.check_id
            self.checklist.mark_running(check_id)
        else:
            check_id = event.finding.id
            self.checklist.mark_finished(event.finding)
        done = len(self.checklist.findings)
        self.banner.set_status(f"running checks {done}/{self._check_count}…")
        if self.checklist.highlighted_id == check_id:
            self._show_highlighted()

    def _checks_done(self, report: Report) -> None:
        if self._quitting:  # a run cut short by quitting is not the machine's report
            return
        self.report = report
        self._paint_source()
        self.banner.set_status(self._summary_text())
        self._show_highlighted()
        if self.session.auto_probe and self.session.run_probe is not None and report.probe is None:
            self.session = replace(self.session, auto_probe=False)  # once; `p` runs it again
            self.action_probe()

    def _show_saved(self, report: Report) -> None:
        from doctor.render.panels import probe_view, verdict_view

        self._paint_source()
        self.checklist.show_findings(report.findings)
        self.banner.set_status(self._summary_text())
        self._show_highlighted()
        probe = probe_view(report.probe) if report.probe is not None else None
        verdict = verdict_view(report.verdict) if report.verdict is not None else None
        if probe is not None or verdict is not None:
            self._show_probe_row()
            if probe is not None:
                self.probe_state = probe
                self.query_one(ProbePanel).show(probe)
            self.query_one(VerdictPanel).show(verdict)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.group == "checks":
            if event.state is WorkerState.SUCCESS:
                self._checks_done(worker.result)
            elif event.state is WorkerState.ERROR:
                self.checklist.stop_running()
                self.banner.set_status(f"☠ the doctor itself failed: {type(worker.error).__name__}: {worker.error} "
                                       "(a bug; please report it)")
        elif worker.group == "probe" and event.state in (WorkerState.SUCCESS, WorkerState.ERROR):
            self._probe_done(worker)

    # ---- details ----------------------------------------------------------------------------
    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._show_highlighted()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """enter: open the selected check's detail full-screen; escape comes back."""
        self._show_highlighted()
        self.screen.maximize(self.detail, container=False)
        self.detail.focus()

    def _show_highlighted(self) -> None:
        check_id = self.checklist.highlighted_id
        if check_id is None:
            self.detail.show(None, "no checks to show")
            return
        finding = self.checklist.findings.get(check_id)
        if finding is None:
            self.detail.show(None, f"{check_id}: {'running…' if self.checklist.is_running(check_id) else 'waiting to run…'}")
        else:
            self.detail.show(finding)

    def action_copy_fix(self) -> None:
        text = self.detail.commands_text
        if not text:
            self.notify("this check has no fix commands to copy")
            return
        self.copy_to_clipboard(text)
        self.notify("fix commands copied (OSC 52: works where the terminal allows clipboard access)")

    # ---- re-run -----------------------------------------------------------------------------
    def action_rerun(self) -> None:
        if self._active_worker("checks"):
            self.notify("the checks are still running")
            return
        if self.session.saved is not None:  # today's checks on the facts recorded there
            saved = self.session.saved
            self.session = replace(self.session, facts=saved.facts, plan=saved.plan, note=saved.note, saved=None)
            self.notify("re-running today's checks on the recorded facts (the report's own findings are replaced)")
        self._start_checks()

    # ---- probe ------------------------------------------------------------------------------
    def action_probe(self) -> None:
        if self.session.run_probe is None:
            self.notify(self.session.no_probe_reason, severity="warning")
            return
        if self._active_worker("probe"):
            self.notify("the probe is already running")
            return
        if self.report is None:
            self.notify("wait for the checks to finish first")
            return
        self._probe_cancel.clear()
        self._show_probe_row()
        self.probe_state = apply_probe_event(ProbeView(), ProbePhase("start", "starting the probe process…"))
        self.query_one(ProbePanel).show(self.probe_state)
        self.query_one(VerdictPanel).show(None)
        report = self.report
        self.run_worker(lambda: self.session.run_probe(report, self._relay_probe_event, self._probe_cancel),
                        thread=True, group="probe", exclusive=True, exit_on_error=False)

    def _relay_probe_event(self, event: ProbeEvent) -> None:
        """Called on the probe runner's thread: hand the event to the screen's thread."""
        self.call_from_thread(self._on_probe_event, event)

    def _on_probe_event(self, event: ProbeEvent) -> None:
        self.probe_state = apply_probe_event(self.probe_state, event)
        self.query_one(ProbePanel).show(self.probe_state)

    def _probe_done(self, worker: Worker) -> None:
        if worker.state is WorkerState.ERROR:
            self._on_probe_event(ProbeFailed(f"{type(worker.error).__name__}: {worker.error}"))
            return
        from doctor.model.report import Report
        from doctor.render.panels import probe_view, verdict_view

        report = worker.result
        if isinstance(report, Report):
            self.report = report
            for finding in report.findings:  # the probe's own finding (decode speed, or why it failed)
                if self.checklist.findings.get(finding.id) != finding:
                    self.checklist.mark_finished(finding)
            self._show_highlighted()
            probe = probe_view(report.probe) if report.probe is not None else None
            live = self.probe_state
            if probe is not None and probe.state == "done":  # the runner's result, with what was seen live kept
                self.probe_state = replace(probe, tok_s=live.tok_s or probe.tok_s,
                                           **{k: v for k in LIVE_READINGS if (v := getattr(live, k)) is not None})
            elif probe is not None:  # failed or cancelled: keep the phase and progress where it stopped
                self.probe_state = replace(live, state=probe.state, error=probe.error)
            self.query_one(ProbePanel).show(self.probe_state)
            self.query_one(VerdictPanel).show(verdict_view(report.verdict) if report.verdict is not None else None)
            self.banner.set_status(self._summary_text())

    def _show_probe_row(self) -> None:
        self.query_one("#probe-row").display = True

    # ---- save -------------------------------------------------------------------------------
    def action_save_json(self) -> None:
        self._ask_to_save("JSON report", self._default_path(".json"), self._write_json)

    def action_save_markdown(self) -> None:
        if self.report is not None:
            from doctor.render.markdown import render_markdown

            self.copy_to_clipboard(render_markdown(self._shareable()))
        self._ask_to_save("Markdown (also copied to the clipboard where the terminal allows)",
                          self._default_path(".md"), self._write_markdown)

    def _ask_to_save(self, what: str, default: str, write) -> None:
        if self.report is None:
            self.notify("nothing to save yet: the checks are still running")
            return

        def chosen(path: str | None) -> None:
            if path:
                write(Path(path).expanduser())

        self.push_screen(SaveDialog(what, default), chosen)

    def _write_json(self, path: Path) -> None:
        from doctor.model.report import report_to_json

        self._write(path, report_to_json(self._shareable()) + "\n", "report")

    def _write_markdown(self, path: Path) -> None:
        from doctor.render.markdown import render_markdown

        self._write(path, render_markdown(self._shareable()), "Markdown")

    def _shareable(self) -> Report:
        """What a save or the clipboard gets: redacted as every report output is, unless --no-redact."""
        from doctor.run.output import shareable

        return shareable(self.report, self.session.redact)

    def _write(self, path: Path, text: str, what: str) -> None:
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            self.notify(f"cannot write {path}: {exc.strerror}", severity="error")
            return
        self.notify(f"{what} saved to {path.resolve()}")

    def _default_path(self, suffix: str) -> str:
        if self.session.save_path and suffix == ".json":
            return self.session.save_path
        stamp = (self.report.created_at if self.report else "").replace("-", "").replace(":", "")[:15].replace("T", "-")
        return f"v100-doctor-report-{stamp or 'now'}{suffix}"

    # ---- quit -------------------------------------------------------------------------------
    async def action_quit(self) -> None:
        """Quit; a running probe is cancelled first and its process group reaped, so no child outlives us;
        a gathering in progress has its torch child stopped, so quitting never waits out its timeout."""
        self._quitting = True
        checks = self._active_worker("checks")
        if checks is not None:
            child = getattr(self._torch, "child", None)
            if child is not None:
                await asyncio.to_thread(child.kill)
            try:
                await asyncio.wait_for(checks.wait(), QUIT_WAIT_S)
            except (asyncio.TimeoutError, WorkerFailed):
                pass
        probe = self._active_worker("probe")
        if probe is not None:
            self.banner.set_status("cancelling the probe…")
            self._probe_cancel.set()  # the runner kills the worker's process group and returns
            try:
                await probe.wait()
            except WorkerFailed:
                pass
            self._probe_done(probe)  # the report keeps how the probe ended (cancelled)
        self.exit(self.report)

    def _active_worker(self, group: str) -> Worker | None:
        return next((w for w in self.workers if w.group == group and w.state in (WorkerState.PENDING, WorkerState.RUNNING)), None)

    # ---- text -------------------------------------------------------------------------------
    def _source_text(self) -> str:
        report, session = self.report, self.session
        where = session.source.removeprefix("replay:").rsplit("/", 1)[-1]
        if report is not None and report.source.startswith("example:"):
            from doctor.render.common import source_line

            return source_line(report)
        if session.saved is not None:
            return f"saved report {where}, read-only: as recorded {report.created_at}"
        if session.source.startswith("replay:"):
            return f"replayed from {where}: recorded facts, today's checks"
        return "this machine, live"

    def _paint_source(self) -> None:
        from doctor.render.common import machine_line

        self.banner.set_source(self._source_text(), machine_line(self.report) if self.report is not None else "")

    def _summary_text(self) -> str:
        from doctor.render.common import counts_line

        report = self.report
        if report is None:
            return ""
        text = f"{counts_line(report.findings)}"
        if report.gpus:  # several GPUs: each one's worst, worst first (the text report has a line per GPU)
            from doctor.render.common import SYMBOLS

            text += " · GPUs: " + ", ".join(f"{SYMBOLS[g.status]} {g.index}" + (f" {g.top().id}" if g.top() and
                                            g.status.value in ("fail", "warn", "error") else "") for g in report.gpus)
        if report.errors:
            text += f" · ☠ {'; '.join(report.errors)}"
        return text
