"""The demo's story and the main screen between them: the story view opens on a stage (or the one asked for with
`demo NAME`), enter shows that stage's whole report on the main screen, and escape or `t` goes back to where it was;
from the story, s / m save a stage's report and c copies its first fix, as they do on its full report.

Every stage's report was replayed before the screen opened (Session.story): nothing here runs or judges."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Protocol

from doctor.model.source import BundledExample
from doctor.render.panels import story_cases
from doctor.tui.save_flow import SaveHost

if TYPE_CHECKING:  # the report model loads after the first frame
    from textual.screen import Screen

    from doctor.model.report import Report
    from doctor.run.run import Run
    from doctor.run.session import Session
    from doctor.tui.report_view import ReportView
    from doctor.tui.save_flow import SaveFlow


def stage_report(session: Session) -> Report | None:
    """The report of the stage the session opens on (a demo's example), replayed before the screen opened."""
    source = session.run.source
    if session.story and isinstance(source, BundledExample):
        return dict(session.story).get(source.name)
    return None


class StoryHost(SaveHost, Protocol):
    """What the story's routes need of the app (DoctorApp): the stage shown is its report and run, drawn by its view."""

    run_shown: Run
    view: ReportView
    saving: SaveFlow

    @property
    def screen(self) -> Screen[Any]: ...

    def call_after_refresh(self, callback: Callable[..., Any]) -> bool: ...

    def action_story(self) -> None: ...


class StoryRoutes:
    """The app's routes to and from the story view (StoryScreen calls open_stage, save_stage and copy_stage_fix)."""

    def __init__(self, app: StoryHost) -> None:
        self.app = app
        self.at: tuple[int, int] = (0, 0)  # (case, stage) the story view shows

    def open_at_start(self) -> None:
        """`demo` opens on the story; `demo NAME` on that stage's report, the story behind it at that stage."""
        session = self.app.session
        if not session.story:
            return
        if session.story_start is None:
            self.app.call_after_refresh(self.app.action_story)
        else:
            names = [name for name, _ in session.story]
            self.at = self._place(names.index(session.story_start))

    def _place(self, flat: int) -> tuple[int, int]:
        seen = 0
        for c, case in enumerate(story_cases(list(self.app.session.story))):
            if flat < seen + len(case.stages):
                return c, flat - seen
            seen += len(case.stages)
        return 0, 0

    def open(self) -> None:
        """`t`, or escape from a stage's report: the story view, at the stage last shown."""
        from doctor.tui.story import StoryScreen  # lazy: the story screen (16 modules) loads when a demo's story opens

        app = self.app
        if not app.session.story or isinstance(app.screen, StoryScreen):
            return
        app.screen.minimize()
        app.view.clear_filter()  # a filter belongs to the report it was typed on: the next stage opens unfiltered
        app.push_screen(StoryScreen(story_cases(list(app.session.story)), *self.at, routes=self))

    def _use_stage(self, name: str) -> None:
        """That stage's report becomes the one shown (and saved) on the main screen."""
        app = self.app
        report = dict(app.session.story)[name]
        if app.report is not report:
            app.run_shown = app.session.stage_run(name)
            app.report = report
            app.view.show_saved(report)

    def save_stage(self, name: str, markdown: bool) -> None:
        """From the story: s / m save the selected stage's report, as they do on its full report."""
        self._use_stage(name)
        self.app.saving.save(markdown)

    def copy_stage_fix(self, name: str) -> None:
        """From the story: c copies the commands of the stage's first failed or warned check that has any."""
        from doctor.model.findings import Status  # lazy: the report model loads after the first frame

        report = dict(self.app.session.story)[name]
        for finding in report.findings:
            if finding.status in (Status.FAIL, Status.WARN) and finding.commands:
                self.app.saving.copy_commands("\n".join(finding.commands), f"{finding.id}'s fix commands")
                return
        self.app.notify("this stage has no fix commands to copy (its full report, enter, says why)")

    def open_stage(self, case: int, stage: int, name: str) -> None:
        """From the story: that stage's whole report on the main screen (escape or `t` goes back)."""
        app = self.app
        report = dict(app.session.story)[name]
        self.at = (case, stage)
        app.run_shown = app.session.stage_run(name)
        app.report = report
        app.view.show_saved(report)
        app.view.focus_list()
