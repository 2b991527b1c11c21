"""The doctor as a screen: the checklist fills in live, each finding opens into its evidence and fix,
the probe shows its progress and live numbers, the verdict is drawn.

A renderer only: the session's Run (doctor/run/run.py, the same the plain text, JSON and Markdown come from) and
the probe stage run in workers; every line on screen comes from their events, which arrive as typed Messages
through one adapter (doctor/tui/messages.py) handled with `@on`, or from a story's replayed report.
"""

from __future__ import annotations

import asyncio
import threading
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, Iterable

from textual import on
from textual.actions import parse as parse_action
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.events import Resize
from textual.screen import Screen
from textual.widgets import Footer, Static
from textual.worker import Worker, WorkerCancelled, WorkerFailed, WorkerState

from doctor.render.panels import ProbeView
from doctor.tui.commands import CheckCommands
from doctor.tui.controls_dropped import SanitisedApp
from doctor.tui.full_text import FullTextScreen
from doctor.tui.guards import while_shown
from doctor.tui.help_screen import HelpScreen
from doctor.tui.keys import palette_actions
from doctor.tui.keys_footer import KeysFooter
from doctor.tui.messages import ChecksListed, Poster, ProbeEnded, RunCrashed, RunFinished
from doctor.tui.report_view import ReportView
from doctor.tui.save_flow import SaveFlow
from doctor.tui.story_routes import StoryRoutes, stage_report

if TYPE_CHECKING:  # the report model loads after the first frame (see on_ready); the run and session are handed in
    from doctor.model.report import Report
    from doctor.run.run import Run, RunControl
    from doctor.run.session import Session


LIST_GRACE_S = 0.02  # the list's frame reaches the terminal before the panels and the CLI's imports take the GIL
FOOTER_WAIT_TRIES = 30  # at most this many 10 ms waits for the footer's keys before the checks start anyway
QUIT_WAIT_S = 1.0  # at most this long for a check run to wind down after its torch child is stopped
COMPACT_KEYS = "? keys  jk move  ⏎ open  v full  / filter  c copy  q quit"  # `?` lists the rest (s m p r t)


class DoctorApp(SanitisedApp["Report | None"]):
    CSS_PATH = "app.tcss"
    TITLE = "v100-doctor"
    ESCAPE_TO_MINIMIZE = False  # escape is `back` (below): it also gives the list its focus again
    ALLOW_IN_MAXIMIZED_VIEW = "Footer, #compact-keys"  # the full-screen details keep their key line at every size
    COMMANDS = App.COMMANDS | {CheckCommands}
    BINDINGS = [
        Binding("q", "quit", "Quit"),  # ctrl+q (textual's own) comes here too
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),  # not an editor: ctrl+c quits, probe cancelled first
        Binding("question_mark,f1", "help", "Help", key_display="?"),
        Binding("v", "full_text", "Full"),  # the full text of every line cut with "…"
        Binding("slash", "filter", "Find", key_display="/"),
        Binding("t", "story", "Story"),  # before the probe: in the demo it is the way back, and the footer is short
        Binding("p", "probe", "Probe"),
        Binding("r", "rerun", "Run"),  # again: "Rerun" would push the last key off 80 columns in the demo
        Binding("s", "save('json')", "Save", key_display="s/m"),  # s JSON, m Markdown: one hint, so 80 columns hold every key
        Binding("m", "save('markdown')", "Md", show=False),
        Binding("c", "copy_fix", "Copy"),
        Binding("escape", "back", "Back", show=False),
        Binding("j,down", "move(1)", "Move", show=False),  # the one-pane layout: the list is hidden, keys still move it
        Binding("k,up", "move(-1)", "Up", show=False),
        Binding("enter", "open", "Details", show=False),
    ]

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.run_shown: Run = session.run  # what the screen shows and `r` runs again (a story stage's, once opened)
        self.report: Report | None = stage_report(session)  # a demo's stage: replayed before the screen opened
        self._probe_cancel = threading.Event()
        self._check_count = 0
        self._control: RunControl | None = None  # a live run's gathering, so quitting can stop its torch child
        self._checks_worker: Worker | None = None
        self._probe_worker: Worker | None = None
        self._auto_probe = session.auto_probe
        self._quitting = False
        self.before_exit: Callable[[], None] | None = None  # the CLI's -o, written while the screen is still up
        self.after_first_frame: Callable[[], None] | None = None  # the CLI's imports that the first frame need not wait for
        self._hung_up = False
        self._list_drawn = False  # the first check list is on screen: the panels and the CLI's imports may follow
        self.saving = SaveFlow(self)  # s, m and c: the shown report saved, a fix's commands copied
        self.story = StoryRoutes(self)  # the demo's story view and the stage shown on this screen
        self.view = ReportView(self.report, session.run.source, id="report-view")  # the main screen above its keys
        # its widgets that the CLI, the palette and the tests read
        self.checklist, self.detail, self.banner = self.view.checklist, self.view.detail, self.view.banner
        self.filter_input = self.view.filter_input

    # ---- layout -----------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield self.view
        yield Static(COMPACT_KEYS, id="compact-keys")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.checklist.border_title = "Checks"
        self.detail.border_title = "Details"
        self.main_screen.query_one(Footer).compact = True  # every key hint of 80x24 fits (a reactive, not an argument, in textual 2)
        self.main_screen.query_one(Footer).show_command_palette = False  # ctrl+p is in help (?): the room goes to the keys
        # back on this screen with nothing focused (the one-pane layout's hidden list), textual would focus its first
        # focusable widget, the filter box, and every key would go into it: only the list may take the focus so
        self.main_screen.AUTO_FOCUS = "#checklist"  # type: ignore[misc]  # this screen only: the default Screen, not a class of ours
        self.checklist.focus()
        if self.report is not None:  # a story stage: the example's report, replayed before the screen opened
            self.view.show_saved(self.report)
        self.view.layout_for(*self.size)
        self.story.open_at_start()
        if self._hung_up:  # the terminal went away while the screen was starting
            self.call_later(self.action_quit)

    def hang_up(self) -> None:
        """SIGHUP (the SSH connection dropped) or SIGTERM, from doctor.cli.hangup's handler, which may run between
        any two bytecodes of the main thread: cancel the probe at once and ask the loop to quit as `q` does.
        The guard then stops every child, and ends the process if the quit cannot finish in time."""
        self._hung_up = True
        self._probe_cancel.set()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # not started yet (on_mount quits) or already ending
        loop.call_soon_threadsafe(lambda: self.call_later(self.action_quit))

    def on_ready(self) -> None:
        """The first frame is composed: start the checks once the frame with the footer's keys has gone to
        textual's writer thread (the worker's imports and gathering would otherwise hold the GIL against it)."""
        self.call_after_refresh(self._when_keys_drawn, FOOTER_WAIT_TRIES)

    @while_shown
    def _when_keys_drawn(self, tries: int) -> None:
        """The footer composes its keys a frame after the screen (once the focus is set): the work the first frame
        does not need waits for them too, so nothing of the first screen waits for it."""
        footer = self.main_screen.query_one(Footer)
        if tries > 0 and footer.display and not footer.children:
            self.set_timer(0.01, lambda: self._when_keys_drawn(tries - 1))
            return
        self.call_after_refresh(self._after_first_frame)  # once the frame with the keys went to the writer thread

    @while_shown
    def _after_first_frame(self) -> None:
        """The check list first (issue 29): the worker starts at once and its ChecksChosen fills the list; the work
        the list does not need (the hidden panels, the CLI's imports) waits until the list is drawn."""
        if self._quitting or self._hung_up:  # q or a hang-up came first: no panels, imports or checks to start now
            return
        if self.report is None:
            self._start_checks()
        else:  # a story stage, drawn in the first frame
            self._after_the_list()

    @on(ChecksListed)
    @on(RunCrashed)  # it never listed its checks (e.g. a file that cannot be replayed)
    @while_shown
    def _after_the_list_soon(self, message: ChecksListed | RunCrashed | None = None) -> None:
        """The list is drawn by the report view (the message comes from it), or will never be."""
        self.call_after_refresh(lambda: self.set_timer(LIST_GRACE_S, self._after_the_list))

    @while_shown
    def _after_the_list(self) -> None:
        """Once, after the list's lines were drawn (or the run ended without listing any): the hidden probe and
        verdict panels mount, and the CLI's hook loads what a quit's -o needs. On this thread, while the worker
        may import gathering too: no import cycles (tests/test_import_cycles.py), so neither waits for ever."""
        if self._list_drawn or self._quitting or self._hung_up:
            return
        self._list_drawn = True
        self.view.probe_row.panels()  # hidden in the first frame: styled and mounted after it
        if self.after_first_frame is not None:
            self.after_first_frame()

    @property
    def main_screen(self) -> Screen[Any]:
        """The checks' screen, under any help, dialog, palette or story on top (textual 2 queries only the top one)."""
        return self.screen_stack[0]

    @property
    def is_compact(self) -> bool:
        """The one-pane layout of a small terminal."""
        return self.view.is_compact

    @property
    def probe_state(self) -> ProbeView:
        """What the probe panel draws now."""
        return self.view.probe_row.state

    # ---- checks -----------------------------------------------------------------------------
    def _start_checks(self) -> None:
        """Run the shown Run on a worker thread; its events come back as Messages (doctor/tui/messages.py) to the
        report view, which draws them; they bubble on to the app."""
        run, view = self.run_shown, self.view
        poster = Poster(view, lambda: self._quitting)
        view.starting(run.live)
        self._control = control = run.control()

        def execute() -> None:
            try:
                run.execute(poster, control)
            except Exception as exc:  # noqa: BLE001 - a bug of the doctor: said on screen, never a crash
                poster.post(RunCrashed(exc))

        self._checks_worker = self.run_worker(execute, thread=True, exclusive=True, exit_on_error=False)

    @on(RunFinished)
    @while_shown
    def _on_run_finished(self, message: RunFinished) -> None:
        if self._quitting:  # a run cut short by quitting is not the machine's report
            return
        self._after_the_list_soon()  # a no-op once the list was drawn
        self.report = report = message.report
        self.view.show_finished(report)
        if report.probe is None and report.verdict is None and self._auto_probe and self.session.run_probe is not None:
            self._auto_probe = False  # once; `p` runs it again
            self.action_probe()

    # ---- details ----------------------------------------------------------------------------
    def action_open(self) -> None:
        self.view.open_detail()

    def action_move(self, step: int) -> None:
        self.view.move(step)

    async def action_back(self) -> None:
        """escape: out of the full-screen details or the filter, back to the list; from a demo report, the story."""
        if self.screen.maximized is not None:
            self.screen.minimize()
        elif self.focused is self.view.filter_input:
            self.view.clear_filter()
        elif self.session.story and self.focused in (self.checklist, None):
            self.action_story()
            return
        self.view.focus_list()

    # ---- help, full text, filter, palette ---------------------------------------------------------
    def action_full_text(self) -> None:
        """`v`: every line of this screen that is cut with "…" (header, the check's line, probe, verdict), whole."""
        if self.screen is not self.screen_stack[0]:
            return
        self.push_screen(FullTextScreen("Full text (escape closes)", self.view.full_text_parts()))

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(story=bool(self.session.story)))

    def action_filter(self) -> None:
        self.view.open_filter()

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """The command palette (ctrl+p): textual's own commands, then every action of the footer and help."""
        yield from super().get_system_commands(screen)

        for title, help_text, action in palette_actions():
            _, name, parameters = parse_action(action)  # "save('json')": action_save("json"), as the key runs it
            if self.check_action(name, parameters):
                yield SystemCommand(title, help_text, partial(getattr(self, f"action_{name}"), *parameters))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action not in STORY_HIDES:
            return True
        from doctor.tui.story import StoryScreen  # lazy: the story screen (16 modules) loads when a demo's story opens

        if isinstance(self.screen, StoryScreen):  # the story has its own keys
            return False
        return bool(self.session.story) if action == "story" else True  # only the demo has a story to go back to

    # ---- small terminals ----------------------------------------------------------------------
    @while_shown
    def on_resize(self, event: Resize) -> None:
        self.view.layout_for(event.size.width, event.size.height)

    # ---- the story (demo) ---------------------------------------------------------------------
    @while_shown
    def action_story(self) -> None:
        self.story.open()

    def action_copy_fix(self) -> None:
        self.saving.copy_commands(self.detail.commands_text)

    # ---- re-run -----------------------------------------------------------------------------
    def action_rerun(self) -> None:
        """`r`: the same Run again (this machine gathered anew; a replay's recorded facts and probe read again)."""
        if active(self._checks_worker):
            self.notify("the checks are still running")
            return
        if active(self._probe_worker):
            self.notify("the probe is still running")
            return
        if not self.run_shown.live:
            self.notify("re-running today's checks on the recorded facts (and today's verdict on a recorded probe)")
        self._start_checks()

    # ---- probe ------------------------------------------------------------------------------
    def action_probe(self) -> None:
        if self.session.run_probe is None:
            self.notify(self.session.no_probe_reason, severity="warning")
            return
        if active(self._probe_worker):
            self.notify("the probe is already running")
            return
        if self.report is None:
            self.notify("wait for the checks to finish first")
            return
        self._probe_cancel.clear()
        row = self.view.probe_row
        row.start()
        self.view.paint_compact()
        report, run_probe, poster, cancel = self.report, self.session.run_probe, Poster(row, lambda: self._quitting), self._probe_cancel

        def probe() -> Report | None:  # its events go to the probe row, and bubble up to the app
            try:
                done = run_probe(report, poster, cancel)
            except Exception as exc:  # noqa: BLE001 - a bug of the doctor: said in the probe panel
                poster.post(ProbeEnded(None, exc))
                return None
            poster.post(ProbeEnded(done))
            return done

        self._probe_worker = self.run_worker(probe, thread=True, exclusive=False, exit_on_error=False)

    @on(ProbeEnded)
    @while_shown
    def _on_probe_ended(self, message: ProbeEnded) -> None:
        """The probe stage returned its report (from the probe row, or from quitting, which waited for it)."""
        report = message.report
        if report is None or report is self.report:  # an error is said in the probe row; already shown
            return
        self.report = report
        self.view.show_probed(report)

    # ---- save -------------------------------------------------------------------------------
    def action_save(self, what: str) -> None:
        """s: the JSON report, m: Markdown (doctor/tui/save_flow.py)."""
        self.saving.save(markdown=what == "markdown")

    # ---- quit -------------------------------------------------------------------------------
    async def action_quit(self) -> None:
        """Quit; a running probe is cancelled first and its process group reaped, so no child outlives us;
        a gathering in progress has its torch child stopped, so quitting never waits out its timeout."""
        self._quitting = True
        checks = active(self._checks_worker)
        if checks is not None:
            if self._control is not None:
                await asyncio.to_thread(self._control.stop)
            try:
                await asyncio.wait_for(checks.wait(), QUIT_WAIT_S)
            except (asyncio.TimeoutError, WorkerFailed, WorkerCancelled):
                pass
        probe = active(self._probe_worker)
        if probe is not None:
            self.banner.set_status("cancelling the probe…")
            self._probe_cancel.set()  # the runner kills the worker's process group and returns
            try:
                await probe.wait()
            except (WorkerFailed, WorkerCancelled):
                pass
            if probe.result is not None:
                self._on_probe_ended(ProbeEnded(probe.result))  # the report keeps how the probe ended (cancelled)
        if self.before_exit is not None:  # -o before the screen is torn down: a terminal closed then cannot lose it
            await asyncio.to_thread(self.before_exit)
        self.exit(self.report)




def active(worker: Worker | None) -> Worker | None:
    """The worker while it is still pending or running; None once it has ended (or was never started)."""
    return worker if worker is not None and worker.state in (WorkerState.PENDING, WorkerState.RUNNING) else None


STORY_HIDES = {"filter", "probe", "rerun", "save", "copy_fix", "story", "full_text"}  # the story has its own keys
