"""The main screen's report: the banner, the check list and the shown check's details, the filter, the probe row,
and the one-pane layout of a small terminal. A renderer only: it draws the report it is handed and the run's
events that its worker posts to it (doctor/tui/messages.py), which then bubble on to the app for what the app keeps
(the report quit returns, the first frame's follow-up work); which screen or dialog opens is the app's.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from rich.console import RenderableType
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widget import Widget
from textual.widgets import Input, OptionList, Static

from doctor.model.events import CheckStarted
from doctor.model.source import Source
from doctor.render.panels import first_line, no_gpu_hint
from doctor.render.untrusted import visible
from doctor.tui.banner import Banner, report_source_text, source_text, summary_text
from doctor.tui.checklist import Checklist
from doctor.tui.detail import DetailPane
from doctor.tui.full_text import section
from doctor.tui.guards import while_attached
from doctor.tui.messages import CheckProgress, ChecksListed, ProbeUpdate, RunCrashed
from doctor.tui.probe_panel import live_line, phase_line
from doctor.tui.probe_row import ProbeRow
from doctor.tui.verdict_panel import VerdictPanel

if TYPE_CHECKING:  # the report model loads after the first frame
    from doctor.model.findings import Finding
    from doctor.model.report import Report

COMPACT_BELOW = (80, 24)  # a smaller terminal gets one pane: the selected check, the verdict's first line, the top fix


class ReportView(Vertical):
    """Everything of the main screen above its key line. `report` is the report drawn (None while the checks run)."""

    def __init__(self, report: Report | None, source: Source, **kw: Any) -> None:
        super().__init__(**kw)
        self.report = report
        self._check_count = 0
        self.engine_text = ""  # "Judged as llama.cpp: ..." once the report says which engine the checks judged
        self.batched_text = ""  # the report's model at 1, 2, 4, 8 ... streams (an estimate), once a report has it
        self.banner = Banner(source_text(report, source), id="banner")
        self.checklist = Checklist(id="checklist")
        self.detail = DetailPane(id="detail")
        self.probe_row = ProbeRow(id="probe-row")  # its panels mount after the first frame: hidden until a probe
        self.filter_input = Input(placeholder="filter checks by id or title (enter: to the list, escape: clear)",
                                  id="filter")

    def compose(self) -> ComposeResult:
        yield self.banner
        yield Static(id="engine")
        yield Static(id="hint")
        yield self.filter_input
        yield Static(id="compact-head")
        with Horizontal(id="main"):
            yield self.checklist
            yield self.detail
        yield self.probe_row
        yield Static(id="batched")  # 1, 2, 4, 8 ... users of the report's model, estimated: beside the speed verdict
        yield Static(id="compact-foot")

    # ---- a report, whole or as its run goes -----------------------------------------------------
    def starting(self, live: bool) -> None:
        """A run starts: an empty list until it says which checks it runs."""
        self.checklist.reset([])
        self.banner.set_status("gathering facts (NVML, Python packages, torch in a child process)…" if live
                               else "reading the recorded facts…")
        self.show_highlighted()

    @on(ChecksListed)
    @while_attached
    def _on_checks_listed(self, message: ChecksListed) -> None:
        event = message.event
        self._check_count = len(event.checks)
        self.checklist.reset(list(event.checks))
        if not event.gathering:
            self.banner.set_status(f"running checks 0/{len(event.checks)}…")
        self.show_highlighted()

    @on(CheckProgress)
    @while_attached
    def _on_check_progress(self, message: CheckProgress) -> None:
        event = message.event
        if isinstance(event, CheckStarted):
            check_id = event.check_id
            self.checklist.mark_running(check_id)
        else:
            check_id = event.finding.id
            self.checklist.mark_finished(event.finding)
        done = len(self.checklist.findings)
        self.banner.set_status(f"running checks {done}/{self._check_count}…")
        if self.checklist.highlighted_id == check_id:
            self.show_highlighted()

    @on(RunCrashed)
    @while_attached
    def _on_run_crashed(self, message: RunCrashed) -> None:
        self.checklist.stop_running()
        self.banner.set_status(f"☠ the doctor itself failed: {type(message.error).__name__}: {message.error} "
                               "(a bug; please report it)")

    @on(ProbeUpdate)
    @while_attached
    def _on_probe_update(self, message: ProbeUpdate) -> None:
        """Drawn by the probe row (the message comes from it); the one-pane foot may now say why nothing was measured."""
        self.paint_compact()

    def show_finished(self, report: Report) -> None:
        """The run's report: its findings beside those drawn live, the summary, and a recorded probe's panels."""
        self.report = report
        self._paint_source(report)
        self.mark_new_findings(report)  # a recorded probe's own finding (decode speed, or why it failed)
        self.banner.set_status(summary_text(report))
        if self.checklist.highlighted in (0, None):  # the user has not moved: open on the first problem
            self.checklist.go_to_first_problem()
        self.show_highlighted()
        self._show_hint()
        if report.probe is not None or report.verdict is not None:  # measured where the facts were recorded
            self._show_probe_of(report)
        self._show_batched(report)

    def show_probed(self, report: Report) -> None:
        """A probe run here has ended: its own finding (decode speed, or why it failed), its panels, the summary."""
        self.report = report
        self.mark_new_findings(report)
        self.show_highlighted()
        self.probe_row.finish(report)
        self._show_batched(report)
        self.paint_compact()
        self.banner.set_status(summary_text(report))

    def show_saved(self, report: Report) -> None:
        """A finished report at once (a story stage)."""
        self.report = report
        self._paint_source(report)
        self.checklist.show_findings(report.findings + _other_gpus_findings(report))
        self.banner.set_status(summary_text(report))
        self.show_highlighted()
        self._show_probe_of(report)
        self._show_batched(report)

    def mark_new_findings(self, report: Report) -> None:
        for finding in report.findings + _other_gpus_findings(report):
            if self.checklist.findings.get(finding.id) != finding:
                self.checklist.mark_finished(finding)

    def _show_probe_of(self, report: Report) -> None:
        """The probe and verdict panels for a finished report (a replay's recorded probe, a story stage)."""
        self.probe_row.show_report(report)
        self.paint_compact()

    def _paint_source(self, report: Report) -> None:
        from doctor.render.common import machine_line  # lazy: after the first frame: render.common loads the report model (15 modules)

        self.banner.set_source(report_source_text(report), machine_line(report))
        self._show_engine(report)

    def _show_engine(self, report: Report) -> None:
        """Which engine the checks judged and why ("Judged as llama.cpp: a GGUF model ..."), as the text report says."""
        from doctor.render.common import engine_line  # lazy: as machine_line

        self.engine_text = engine_line(report)
        engine = self.query_one("#engine", Static)
        engine.update(Text(self.engine_text))
        engine.set_class(bool(self.engine_text), "-shown")  # a small terminal's one pane leaves it out (app.tcss)

    def _show_batched(self, report: Report) -> None:
        """Batched decode of the report's model (an estimate): its speed by streams and the knee, in one line."""
        from doctor.render.batched_text import one_line  # lazy: as machine_line

        self.batched_text = one_line(report)
        line = self.query_one("#batched", Static)
        line.update(Text(self.batched_text))
        line.set_class(bool(self.batched_text), "-shown")

    def _show_hint(self) -> None:
        hint = no_gpu_hint(self.report) if self.report is not None else ""
        self.query_one("#hint", Static).update(hint)
        self.query_one("#hint").display = bool(hint)

    # ---- the list, the details and the filter -----------------------------------------------
    @while_attached
    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self.show_highlighted()

    @while_attached
    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """enter: open the selected check's detail full-screen; escape comes back."""
        self.open_detail()

    def open_detail(self) -> None:
        if self.app.screen is not self.screen:
            return
        self.show_highlighted()
        self.screen.maximize(self.detail, container=False)
        self.detail.focus()

    def move(self, step: int) -> None:
        """j/k when the list itself does not have the focus (the one-pane layout of a small terminal)."""
        if self.app.screen is not self.screen:
            return
        (self.checklist.action_cursor_down if step > 0 else self.checklist.action_cursor_up)()

    def show_highlighted(self) -> None:
        check_id = self.checklist.highlighted_id
        if check_id is None:
            self.detail.show(None, "no checks to show" if not self.checklist.filter_text else
                             f"no check matches “{self.checklist.filter_text}” (escape clears the filter)")
        else:
            finding = self.checklist.findings.get(check_id)
            if finding is None:
                self.detail.show(None, f"{check_id}: {'running…' if self.checklist.is_checking(check_id) else 'waiting to run…'}")
            else:
                self.detail.show(finding)
        self.paint_compact()

    def show_check(self, check_id: str) -> None:
        """The palette's "open a check": the list's cursor on it, its details shown."""
        if self.checklist.go_to(check_id):
            self.filter_input.value = self.checklist.filter_text
            self.filter_input.display = bool(self.checklist.filter_text)
            self.show_highlighted()

    def open_filter(self) -> None:
        """`/`: type to narrow the list; enter goes back to it, escape clears the filter."""
        self.screen.minimize()
        self.filter_input.display = True
        self.filter_input.focus()

    def clear_filter(self) -> None:
        self.checklist.set_filter("")
        self.filter_input.value = ""
        self.filter_input.display = False

    @while_attached
    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "filter":
            self.checklist.set_filter(event.value)
            self.show_highlighted()

    @while_attached
    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "filter":
            self.filter_input.display = bool(event.value.strip())
            self.focus_list()

    def focus_list(self) -> None:
        if self.is_compact:
            self.app.set_focus(None)  # the list is hidden: the app's j/k move it
        else:
            self.checklist.focus()

    def full_text_parts(self) -> list[RenderableType | Widget]:
        """`v`: every line of this screen that is cut with "…" (header, the check's line, probe, verdict), whole."""
        header = [*self.banner.lines, self.engine_text] if self.engine_text else self.banner.lines
        parts: list[RenderableType | Widget] = [section("Header", *header)]
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
        if self.batched_text:
            parts.append(section("Batched decode", self.batched_text))
        return parts

    # ---- small terminals ----------------------------------------------------------------------
    @property
    def is_compact(self) -> bool:
        return self.screen.has_class("-one-pane")

    def layout_for(self, width: int, height: int) -> None:
        main = self.screen
        compact = width < COMPACT_BELOW[0] or height < COMPACT_BELOW[1]
        if compact == main.has_class("-one-pane"):
            return
        main.set_class(compact, "-one-pane")
        self.banner.set_compact(compact)
        if self.app.screen is main and self.app.focused in (self.checklist, None):
            self.focus_list()
        self.paint_compact()

    def paint_compact(self) -> None:
        """One pane's header and foot: which check (n of N), the verdict's first line and the top fix."""
        check_id, shown = self.checklist.highlighted_id, self.checklist.shown_ids
        head = "no checks" if check_id is None else \
            f"{self.checklist.symbol_of(check_id)} {check_id}  ({shown.index(check_id) + 1} of {len(shown)}; j/k: next)"
        self.query_one("#compact-head", Static).update(Text(head))
        self.query_one("#compact-foot", Static).update(Text("\n".join(self._compact_lines())))

    def _compact_lines(self) -> list[str]:
        v = self.probe_row.verdict
        if v is not None:
            fix = v.fix_first or (f"at the card's limit; options: {v.limit_options}" if v.limit_options else "")
            return [f"Verdict: {first_line(v.headline) or f'{v.measured_tok_s:.1f} of {v.ceiling_tok_s:.1f} tok/s'}"] + \
                ([f"Fix first: {fix}"] if fix else [])
        probe = self.probe_row.state
        if probe.state == "skipped":
            return [f"No probe: {probe.error}"]
        problem = self.checklist.first_problem()
        finding = self.checklist.findings.get(problem) if problem else None
        if finding is not None and finding.fix:
            return [f"Fix first ({finding.id}): {finding.fix}"]
        return [summary_text(self.report)] if self.report is not None else []


def _other_gpus_findings(report: Report) -> tuple[Finding, ...]:
    """Each other GPU that fails or warns gets its own lines in the list ("gpu1/cuda-pairing"), with its fix and its
    route's commands in the detail pane, as the text and Markdown reports give them."""
    from doctor.render.common import gpu_label, gpus_needing_care  # lazy: after the first frame (the report model)

    return tuple(replace(f, id=f"gpu{g.index}/{f.id}", title=f"{gpu_label(report, g)}: {f.title}")
                 for g, findings in gpus_needing_care(report) for f in findings)
