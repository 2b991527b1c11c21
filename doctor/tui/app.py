"""The doctor as a screen: the checklist fills in live, each finding opens into its evidence and fix,
the probe shows its progress and live numbers, the verdict is drawn.

A renderer only: the session's Run (doctor/run/run.py, the same the plain text, JSON and Markdown come from) and
the probe stage run in workers; every line on screen comes from their events, which arrive as typed Messages
through one adapter (doctor/tui/messages.py) handled with `@on`, or from a story's replayed report.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from rich.text import Text
from textual import on
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal
from textual.filter import LineFilter
from textual.widgets import Footer, Input, OptionList, Static
from textual.worker import Worker, WorkerCancelled, WorkerFailed, WorkerState

from doctor.model.events import CheckEvent, CheckStarted
from doctor.model.source import BundledExample, Origin, SavedFile
from doctor.render.panels import ProbeView, first_line, no_gpu_hint, story_cases
from doctor.render.untrusted import visible
from doctor.tui.banner import Banner
from doctor.tui.checklist import Checklist
from doctor.tui.commands import CheckCommands
from doctor.tui.controls_dropped import with_controls_dropped
from doctor.tui.detail import DetailPane
from doctor.tui.full_text import FullTextScreen, section
from doctor.tui.guards import while_shown
from doctor.tui.help_screen import HelpScreen
from doctor.tui.keys import palette_actions
from doctor.tui.keys_footer import KeysFooter
from doctor.tui.messages import CheckProgress, ChecksListed, Poster, ProbeEnded, ProbeUpdate, RunCrashed, RunFinished
from doctor.tui.probe_panel import live_line, phase_line
from doctor.tui.probe_row import ProbeRow
from doctor.tui.save_flow import SaveFlow
from doctor.tui.verdict_panel import VerdictPanel

if TYPE_CHECKING:  # the report model loads after the first frame (see on_ready); the run and session are handed in
    from doctor.model.report import Report
    from doctor.run.run import Run, RunControl
    from doctor.run.session import Session


LIST_GRACE_S = 0.02  # the list's frame reaches the terminal before the panels and the CLI's imports take the GIL
FOOTER_WAIT_TRIES = 30  # at most this many 10 ms waits for the footer's keys before the checks start anyway
QUIT_WAIT_S = 1.0  # at most this long for a check run to wind down after its torch child is stopped
COMPACT_BELOW = (80, 24)  # a smaller terminal gets one pane: the selected check, the verdict's first line, the top fix
COMPACT_KEYS = "? keys  jk move  ⏎ open  v full  / filter  c copy  q quit"  # `?` lists the rest (s m p r t)


class DoctorApp(App["Report | None"]):
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
        Binding("s", "save_json", "Save", key_display="s/m"),  # s JSON, m Markdown: one hint, so 80 columns hold every key
        Binding("m", "save_markdown", "Md", show=False),
        Binding("c", "copy_fix", "Copy"),
        Binding("escape", "back", "Back", show=False),
        Binding("j,down", "move(1)", "Move", show=False),  # the one-pane layout: the list is hidden, keys still move it
        Binding("k,up", "move(-1)", "Up", show=False),
        Binding("enter", "open", "Details", show=False),
    ]

    def get_line_filters(self) -> Sequence[LineFilter]:
        """Textual's filters and the sanitiser: names and paths from the machine or a report are drawn, not obeyed."""
        return with_controls_dropped(super().get_line_filters())

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.run_shown: Run = session.run  # what the screen shows and `r` runs again (a story stage's, once opened)
        self.report: Report | None = self._story_report(session.run)
        self._probe_cancel = threading.Event()
        self._check_count = 0
        self._control: RunControl | None = None  # a live run's gathering, so quitting can stop its torch child
        self._checks_worker: Worker | None = None
        self._probe_worker: Worker | None = None
        self._auto_probe = session.auto_probe
        self._quitting = False
        self.before_exit: Callable[[], None] | None = None  # the CLI's -o, written while the screen is still up
        self.after_first_frame: Callable[[], None] | None = None  # the CLI's imports that the first frame need not wait for
        self._story_at: tuple[int, int] = (0, 0)  # (case, stage) the story view shows
        self._hung_up = False
        self._list_drawn = False  # the first check list is on screen: the panels and the CLI's imports may follow
        self.saving = SaveFlow(self)  # s, m and c: the shown report saved, a fix's commands copied

    def _story_report(self, run: Run) -> Report | None:
        """The demo's story has every example replayed before the screen opens: the stage shown needs no run."""
        if self.session.story and isinstance(run.source, BundledExample):
            return dict(self.session.story).get(run.source.name)
        return None

    # ---- layout -----------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Banner(self._source_text(), id="banner")
        yield Static(id="hint")
        yield Input(placeholder="filter checks by id or title (enter: to the list, escape: clear)", id="filter")
        yield Static(id="compact-head")
        with Horizontal(id="main"):
            yield Checklist(id="checklist")
            yield DetailPane(id="detail")
        yield ProbeRow(id="probe-row")  # its panels mount after the first frame (_after_the_list): it is hidden until a probe
        yield Static(id="compact-foot")
        yield Static(COMPACT_KEYS, id="compact-keys")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.checklist.border_title = "Checks"
        self.detail.border_title = "Details"
        self.main_screen.query_one(Footer).compact = True  # every key hint of 80x24 fits (a reactive, not an argument, in textual 2)
        self.main_screen.query_one(Footer).show_command_palette = False  # ctrl+p is in help (?): the room goes to the keys
        # back on this screen with nothing focused (the one-pane layout's hidden list), textual would focus its first
        # focusable widget, the filter box, and every key would go into it: only the list may take the focus so
        self.main_screen.AUTO_FOCUS = "#checklist"
        self.checklist.focus()
        if self.report is not None:  # a story stage: the example's report, replayed before the screen opened
            self._show_saved(self.report)
        self._layout_for(*self.size)
        self._open_story_at_start()
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

    def _after_the_list_soon(self) -> None:
        self.call_after_refresh(lambda: self.set_timer(LIST_GRACE_S, self._after_the_list))

    @while_shown
    def _after_the_list(self) -> None:
        """Once, after the list's lines were drawn (or the run ended without listing any): the hidden probe and
        verdict panels mount, and the CLI's hook loads what a quit's -o needs. On this thread, while the worker
        may import gathering too: no import cycles (tests/test_import_cycles.py), so neither waits for ever."""
        if self._list_drawn or self._quitting or self._hung_up:
            return
        self._list_drawn = True
        self.probe_row.panels()  # hidden in the first frame: styled and mounted after it
        if self.after_first_frame is not None:
            self.after_first_frame()

    @property
    def main_screen(self):
        """The checks' screen, under any help, dialog, palette or story on top (textual 2 queries only the top one)."""
        return self.screen_stack[0]

    @property
    def checklist(self) -> Checklist:
        return self.main_screen.query_one(Checklist)

    @property
    def detail(self) -> DetailPane:
        return self.main_screen.query_one(DetailPane)

    @property
    def banner(self) -> Banner:
        return self.main_screen.query_one(Banner)

    @property
    def probe_row(self) -> ProbeRow:
        return self.main_screen.query_one(ProbeRow)

    @property
    def probe_state(self) -> ProbeView:
        """What the probe panel draws now."""
        return self.probe_row.state

    # ---- checks -----------------------------------------------------------------------------
    def _start_checks(self) -> None:
        """Run the shown Run on a worker thread; its events come back as Messages (doctor/tui/messages.py)."""
        run, poster = self.run_shown, Poster(self)
        self.checklist.reset([])
        self.banner.set_status("gathering facts (NVML, Python packages, torch in a child process)…" if run.live
                               else "reading the recorded facts…")
        self._show_highlighted()
        self._control = control = run.control()

        def execute() -> None:
            try:
                run.execute(poster, control)
            except Exception as exc:  # noqa: BLE001 - a bug of the doctor: said on screen, never a crash
                self.post_message(RunCrashed(exc))

        self._checks_worker = self.run_worker(execute, thread=True, exclusive=True, exit_on_error=False)

    @on(ChecksListed)
    @while_shown
    def _on_checks_listed(self, message: ChecksListed) -> None:
        event = message.event
        self._check_count = len(event.checks)
        self.checklist.reset(list(event.checks))
        if not event.gathering:
            self.banner.set_status(f"running checks 0/{len(event.checks)}…")
        self._show_highlighted()
        self._after_the_list_soon()

    @on(CheckProgress)
    @while_shown
    def _on_check_progress(self, message: CheckProgress) -> None:
        self._on_check_event(message.event)

    @on(RunFinished)
    @while_shown
    def _on_run_finished(self, message: RunFinished) -> None:
        self._checks_done(message.report)

    @on(RunCrashed)
    @while_shown
    def _on_run_crashed(self, message: RunCrashed) -> None:
        self._after_the_list_soon()  # it never listed its checks (e.g. a file that cannot be replayed)
        self.checklist.stop_running()
        self.banner.set_status(f"☠ the doctor itself failed: {type(message.error).__name__}: {message.error} "
                               "(a bug; please report it)")

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
        self._after_the_list_soon()  # a no-op once the list was drawn
        self.report = report
        self._paint_source()
        self._mark_new_findings(report)  # a recorded probe's own finding (decode speed, or why it failed)
        self.banner.set_status(self._summary_text())
        if self.checklist.highlighted in (0, None):  # the user has not moved: open on the first problem
            self.checklist.go_to_first_problem()
        self._show_highlighted()
        self._show_hint()
        if report.probe is not None or report.verdict is not None:  # measured where the facts were recorded
            self._show_probe_of(report)
        elif self._auto_probe and self.session.run_probe is not None:
            self._auto_probe = False  # once; `p` runs it again
            self.action_probe()

    def _mark_new_findings(self, report: Report) -> None:
        for finding in report.findings + _other_gpus_findings(report):
            if self.checklist.findings.get(finding.id) != finding:
                self.checklist.mark_finished(finding)

    def _show_probe_of(self, report: Report) -> None:
        """The probe and verdict panels for a finished report (a replay's recorded probe, a story stage)."""
        self.probe_row.show_report(report)
        self._paint_compact()

    def _show_saved(self, report: Report) -> None:
        self._paint_source()
        self.checklist.show_findings(report.findings + _other_gpus_findings(report))
        self.banner.set_status(self._summary_text())
        self._show_highlighted()
        self._show_probe_of(report)

    # ---- details ----------------------------------------------------------------------------
    @while_shown
    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._show_highlighted()

    @while_shown
    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """enter: open the selected check's detail full-screen; escape comes back."""
        self.action_open()

    def action_open(self) -> None:
        if self.screen is not self.screen_stack[0]:
            return
        self._show_highlighted()
        self.screen.maximize(self.detail, container=False)
        self.detail.focus()

    def action_move(self, step: int) -> None:
        """j/k when the list itself does not have the focus (the one-pane layout of a small terminal)."""
        if self.screen is not self.screen_stack[0]:
            return
        (self.checklist.action_cursor_down if step > 0 else self.checklist.action_cursor_up)()

    def action_back(self) -> None:
        """escape: out of the full-screen details or the filter, back to the list; from a demo report, the story."""
        if self.screen.maximized is not None:
            self.screen.minimize()
        elif self.focused is self.filter_input:
            self._clear_filter()
        elif self.session.story and self.focused in (self.checklist, None):
            self.action_story()
            return
        self._focus_list()

    def _clear_filter(self) -> None:
        self.checklist.set_filter("")
        self.filter_input.value = ""
        self.filter_input.display = False

    def _focus_list(self) -> None:
        if self.is_compact:
            self.set_focus(None)  # the list is hidden: the app's j/k move it
        else:
            self.checklist.focus()

    def _show_highlighted(self) -> None:
        check_id = self.checklist.highlighted_id
        if check_id is None:
            self.detail.show(None, "no checks to show" if not self.checklist.filter_text else
                             f"no check matches “{self.checklist.filter_text}” (escape clears the filter)")
        else:
            finding = self.checklist.findings.get(check_id)
            if finding is None:
                self.detail.show(None, f"{check_id}: {'running…' if self.checklist.is_running(check_id) else 'waiting to run…'}")
            else:
                self.detail.show(finding)
        self._paint_compact()

    # ---- help, full text, filter, palette ---------------------------------------------------------
    def action_full_text(self) -> None:
        """`v`: every line of this screen that is cut with "…" (header, the check's line, probe, verdict), whole."""
        if self.screen is not self.screen_stack[0]:
            return
        self.push_screen(FullTextScreen("Full text (escape closes)", self.full_text_parts()))

    def full_text_parts(self) -> list:
        parts: list = [section("Header", *self.banner.lines)]
        hint = no_gpu_hint(self.report) if self.report is not None else ""
        if hint:
            parts.append(section("Hint", hint))
        check_id = self.checklist.highlighted_id
        finding = self.checklist.findings.get(check_id) if check_id else None
        if finding is not None:
            parts.append(section(f"Check: {self.checklist.symbol_of(finding.id)} {finding.id}", finding.title,
                                 visible(finding.summary), f"Fix: {finding.fix}" if finding.fix else "",
                                 *(c if c.startswith("#") else f"$ {c}" for c in finding.commands)))
        elif check_id is not None:
            parts.append(section(f"Check: {check_id}", self.checklist.title_of(check_id), "not finished yet"))
        row = self.probe_row
        if row.shown:
            parts.append(section("Probe", phase_line(row.state), live_line(row.state)))
        if row.verdict is not None:
            panel = VerdictPanel(whole=True)
            panel.view = row.verdict
            parts += [section("Verdict", row.verdict.headline), panel]
        return parts

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(story=bool(self.session.story)))

    @property
    def filter_input(self) -> Input:
        return self.main_screen.query_one("#filter", Input)

    def action_filter(self) -> None:
        """`/`: type to narrow the list; enter goes back to it, escape clears the filter."""
        self.screen.minimize()
        self.filter_input.display = True
        self.filter_input.focus()

    @while_shown
    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "filter":
            self.checklist.set_filter(event.value)
            self._show_highlighted()

    @while_shown
    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "filter":
            self.filter_input.display = bool(event.value.strip())
            self._focus_list()

    def show_check(self, check_id: str) -> None:
        """The palette's "open a check": the list's cursor on it, its details shown."""
        if self.checklist.go_to(check_id):
            self.filter_input.value = self.checklist.filter_text
            self.filter_input.display = bool(self.checklist.filter_text)
            self._show_highlighted()

    def get_system_commands(self, screen):
        """The command palette (ctrl+p): textual's own commands, then every action of the footer and help."""
        yield from super().get_system_commands(screen)

        for title, help_text, action in palette_actions():
            if self.check_action(action, ()):
                yield SystemCommand(title, help_text, getattr(self, f"action_{action}"))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action not in STORY_HIDES:
            return True
        from doctor.tui.story import StoryScreen  # lazy: the story screen (16 modules) loads when a demo's story opens

        if isinstance(self.screen, StoryScreen):  # the story has its own keys
            return False
        return bool(self.session.story) if action == "story" else True  # only the demo has a story to go back to

    # ---- small terminals ----------------------------------------------------------------------
    @property
    def is_compact(self) -> bool:
        return self.screen_stack[0].has_class("-one-pane")

    @while_shown
    def on_resize(self, event) -> None:
        self._layout_for(event.size.width, event.size.height)

    def _layout_for(self, width: int, height: int) -> None:
        main = self.screen_stack[0]
        compact = width < COMPACT_BELOW[0] or height < COMPACT_BELOW[1]
        if compact == main.has_class("-one-pane"):
            return
        main.set_class(compact, "-one-pane")
        self.banner.set_compact(compact)
        if self.screen is main and self.focused in (self.checklist, None):
            self._focus_list()
        self._paint_compact()

    def _paint_compact(self) -> None:
        """One pane's header and foot: which check (n of N), the verdict's first line and the top fix."""
        check_id, shown = self.checklist.highlighted_id, self.checklist.shown_ids
        head = "no checks" if check_id is None else \
            f"{self.checklist.symbol_of(check_id)} {check_id}  ({shown.index(check_id) + 1} of {len(shown)}; j/k: next)"
        self.main_screen.query_one("#compact-head", Static).update(Text(head))
        self.main_screen.query_one("#compact-foot", Static).update(Text("\n".join(self._compact_lines())))

    def _compact_lines(self) -> list[str]:
        v = self.probe_row.verdict
        if v is not None:
            fix = v.fix_first or (f"at the card's limit; options: {v.limit_options}" if v.limit_options else "")
            return [f"Verdict: {first_line(v.headline) or f'{v.measured_tok_s:.1f} of {v.ceiling_tok_s:.1f} tok/s'}"] + \
                ([f"Fix first: {fix}"] if fix else [])
        if self.probe_state.state == "skipped":
            return [f"No probe: {self.probe_state.error}"]
        problem = self.checklist.first_problem()
        finding = self.checklist.findings.get(problem) if problem else None
        if finding is not None and finding.fix:
            return [f"Fix first ({finding.id}): {finding.fix}"]
        return [self._summary_text()] if self.report is not None else []

    def _show_hint(self) -> None:
        hint = no_gpu_hint(self.report) if self.report is not None else ""
        self.main_screen.query_one("#hint", Static).update(hint)
        self.main_screen.query_one("#hint").display = bool(hint)

    # ---- the story (demo) ---------------------------------------------------------------------
    def _open_story_at_start(self) -> None:
        if self.session.story and self.session.story_start is None:
            self.call_after_refresh(self.action_story)
        elif self.session.story:
            names = [name for name, _ in self.session.story]
            self._story_at = self._story_place(names.index(self.session.story_start))

    def _story_place(self, flat: int) -> tuple[int, int]:
        seen = 0
        for c, case in enumerate(story_cases(list(self.session.story))):
            if flat < seen + len(case.stages):
                return c, flat - seen
            seen += len(case.stages)
        return 0, 0

    @while_shown
    def action_story(self) -> None:
        from doctor.tui.story import StoryScreen  # lazy: the story screen (16 modules) loads when a demo's story opens

        if not self.session.story or isinstance(self.screen, StoryScreen):
            return
        self.screen.minimize()
        self._clear_filter()  # a filter belongs to the report it was typed on: the next stage opens unfiltered
        self.push_screen(StoryScreen(story_cases(list(self.session.story)), *self._story_at))

    def _use_stage(self, name: str) -> None:
        """That stage's report becomes the one shown (and saved) on the main screen."""
        report = dict(self.session.story)[name]
        if self.report is not report:
            self.run_shown = self.session.stage_run(name)
            self.report = report
            self._show_saved(report)

    def save_stage(self, name: str, markdown: bool) -> None:
        """From the story: s / m save the selected stage's report, as they do on its full report."""
        self._use_stage(name)
        (self.action_save_markdown if markdown else self.action_save_json)()

    def copy_stage_fix(self, name: str) -> None:
        """From the story: c copies the commands of the stage's first failed or warned check that has any."""
        from doctor.model.findings import Status  # lazy: the report model loads after the first frame

        report = dict(self.session.story)[name]
        for finding in report.findings:
            if finding.status in (Status.FAIL, Status.WARN) and finding.commands:
                self.saving.copy_commands("\n".join(finding.commands), f"{finding.id}'s fix commands")
                return
        self.notify("this stage has no fix commands to copy (its full report, enter, says why)")

    def open_stage(self, case: int, stage: int, name: str) -> None:
        """From the story: that stage's whole report on the main screen (escape or `t` goes back)."""
        report = dict(self.session.story)[name]
        self._story_at = (case, stage)
        self.run_shown = self.session.stage_run(name)
        self.report = report
        self._show_saved(report)
        self._focus_list()

    def action_copy_fix(self) -> None:
        self.saving.copy_commands(self.detail.commands_text)

    # ---- re-run -----------------------------------------------------------------------------
    def action_rerun(self) -> None:
        """`r`: the same Run again (this machine gathered anew; a replay's recorded facts and probe read again)."""
        if self._active(self._checks_worker):
            self.notify("the checks are still running")
            return
        if self._active(self._probe_worker):
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
        if self._active(self._probe_worker):
            self.notify("the probe is already running")
            return
        if self.report is None:
            self.notify("wait for the checks to finish first")
            return
        self._probe_cancel.clear()
        row = self.probe_row
        row.start()
        self._paint_compact()
        report, run_probe, poster, cancel = self.report, self.session.run_probe, Poster(row), self._probe_cancel

        def probe() -> Report | None:  # its events go to the probe row, and bubble up to the app
            try:
                done = run_probe(report, poster, cancel)
            except Exception as exc:  # noqa: BLE001 - a bug of the doctor: said in the probe panel
                row.post_message(ProbeEnded(None, exc))
                return None
            row.post_message(ProbeEnded(done))
            return done

        self._probe_worker = self.run_worker(probe, thread=True, exclusive=False, exit_on_error=False)

    @on(ProbeUpdate)
    @while_shown
    def _on_probe_update(self, message: ProbeUpdate) -> None:
        """Drawn by the probe row; the one-pane foot may now say why nothing was measured."""
        self._paint_compact()

    @on(ProbeEnded)
    @while_shown
    def _on_probe_ended(self, message: ProbeEnded) -> None:
        if message.report is not None:  # an error is said in the probe row
            self._probe_done(message.report)

    def _probe_done(self, report: Report) -> None:
        if report is self.report:  # already shown (the quit path and the message both bring it)
            return
        self.report = report
        self._mark_new_findings(report)  # the probe's own finding (decode speed, or why it failed)
        self._show_highlighted()
        self.probe_row.finish(report)
        self._paint_compact()
        self.banner.set_status(self._summary_text())

    # ---- save -------------------------------------------------------------------------------
    def action_save_json(self) -> None:
        self.saving.save(markdown=False)

    def action_save_markdown(self) -> None:
        self.saving.save(markdown=True)

    # ---- quit -------------------------------------------------------------------------------
    async def action_quit(self) -> None:
        """Quit; a running probe is cancelled first and its process group reaped, so no child outlives us;
        a gathering in progress has its torch child stopped, so quitting never waits out its timeout."""
        self._quitting = True
        checks = self._active(self._checks_worker)
        if checks is not None:
            if self._control is not None:
                await asyncio.to_thread(self._control.stop)
            try:
                await asyncio.wait_for(checks.wait(), QUIT_WAIT_S)
            except (asyncio.TimeoutError, WorkerFailed, WorkerCancelled):
                pass
        probe = self._active(self._probe_worker)
        if probe is not None:
            self.banner.set_status("cancelling the probe…")
            self._probe_cancel.set()  # the runner kills the worker's process group and returns
            try:
                await probe.wait()
            except (WorkerFailed, WorkerCancelled):
                pass
            if probe.result is not None:
                self._probe_done(probe.result)  # the report keeps how the probe ended (cancelled)
        if self.before_exit is not None:  # -o before the screen is torn down: a terminal closed then cannot lose it
            await asyncio.to_thread(self.before_exit)
        self.exit(self.report)

    @staticmethod
    def _active(worker: Worker | None) -> Worker | None:
        """The worker while it is still pending or running; None once it has ended (or was never started)."""
        return worker if worker is not None and worker.state in (WorkerState.PENDING, WorkerState.RUNNING) else None

    # ---- text -------------------------------------------------------------------------------
    def _source_text(self) -> str:
        """Where the shown facts come from: the report's provenance, or before it the source asked for."""
        report = self.report
        if report is not None:
            src = report.source
            if src.origin is Origin.EXAMPLE:
                from doctor.render.common import source_line  # lazy: after the first frame: render.common loads the report model (15 modules)

                return source_line(report)
            if src.origin is Origin.REPLAY:
                what = "recorded facts and probe, today's checks and verdict" if report.probe is not None else \
                    "recorded facts, today's checks"
                return f"replayed from {src.file_name}: {what}"
            return "this machine, live"
        source = self.run_shown.source
        if isinstance(source, SavedFile):
            return f"replayed from {Path(source.path).name}: recorded facts, today's checks"
        if isinstance(source, BundledExample):
            return f"RECORDED EXAMPLE ({source.name}), not this machine"
        return "this machine, live"

    def _paint_source(self) -> None:
        from doctor.render.common import machine_line  # lazy: after the first frame: render.common loads the report model (15 modules)

        self.banner.set_source(self._source_text(), machine_line(self.report) if self.report is not None else "")

    def _summary_text(self) -> str:
        from doctor.render.common import summary_counts  # lazy: after the first frame: render.common loads the report model (15 modules)

        report = self.report
        if report is None:
            return ""
        text = summary_counts(report)
        if report.gpus:  # several GPUs: each one's worst, worst first (the text report has a line per GPU)
            from doctor.render.common import SYMBOLS  # lazy: after the first frame: render.common loads the report model (15 modules)

            text += " · GPUs: " + ", ".join(f"{SYMBOLS[g.status]} {g.index}" + (f" {g.top().id}" if g.top() and
                                            g.status.value in ("fail", "warn", "error") else "") for g in report.gpus)
        if report.errors:
            text += f" · ☠ {'; '.join(report.errors)}"
        return text


def _other_gpus_findings(report: Report) -> tuple:
    """Each other GPU that fails or warns gets its own lines in the list ("gpu1/cuda-pairing"), with its fix and its
    route's commands in the detail pane, as the text and Markdown reports give them."""
    from doctor.render.common import gpu_label, gpus_needing_care  # lazy: after the first frame (the report model)

    return tuple(replace(f, id=f"gpu{g.index}/{f.id}", title=f"{gpu_label(report, g)}: {f.title}")
                 for g, findings in gpus_needing_care(report) for f in findings)


STORY_HIDES = {"filter", "probe", "rerun", "save_json", "save_markdown", "copy_fix", "story", "full_text"}
