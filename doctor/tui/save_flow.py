"""The report leaving the screen: `s` saves it as JSON, `m` as Markdown (and copies that), `c` copies a fix's
commands. What is saved or copied is redacted as every report output is (unless --no-redact), and written by the
session's one atomic writer; a path that cannot be written is said in a notification, never raised."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol

from doctor.tui.save_dialog import SaveDialog

if TYPE_CHECKING:  # the report model loads after the first frame
    from textual.notifications import SeverityLevel
    from textual.screen import Screen

    from doctor.model.report import Report
    from doctor.run.session import Session

CLIPBOARD_NOTE = "OSC 52: works where the terminal allows clipboard access"


class SaveHost(Protocol):
    """What the save flow needs of the app (DoctorApp): the report shown, the session, and textual's notify,
    clipboard and screens."""

    report: Report | None
    session: Session

    def notify(self, message: str, *, severity: SeverityLevel = ...) -> None: ...

    def copy_to_clipboard(self, text: str) -> None: ...

    def push_screen(self, screen: Screen[Any], callback: Callable[[Any], None] | None = ...) -> Any: ...


class SaveFlow:
    """Saves and copies the app's shown report (`app.report`), asking where with a SaveDialog."""

    def __init__(self, app: SaveHost) -> None:
        self.app = app

    def save(self, markdown: bool) -> None:
        """s (JSON) or m (Markdown, also copied to the clipboard where the terminal allows)."""
        if not markdown:
            self._ask("JSON report", self.default_path(".json"), self._write_json)
            return
        if self.app.report is not None:
            from doctor.render.markdown import render_markdown  # lazy: Markdown is drawn only when saving, after the first frame

            self.app.copy_to_clipboard(render_markdown(self._shareable()))
        self._ask("Markdown (also copied to the clipboard where the terminal allows)", self.default_path(".md"),
                  self._write_markdown)

    def copy_commands(self, text: str, what: str = "fix commands") -> None:
        """c: `text` (a fix's commands) to the clipboard; nothing to copy is said."""
        if not text:
            self.app.notify("this check has no fix commands to copy")
            return
        self.app.copy_to_clipboard(text)
        self.app.notify(f"{what} copied ({CLIPBOARD_NOTE})")

    def _ask(self, what: str, default: str, write: Callable[[Path], None]) -> None:
        if self.app.report is None:
            self.app.notify("nothing to save yet: the checks are still running")
            return

        def chosen(path: str | None) -> None:
            if path:
                write(Path(path).expanduser())

        self.app.push_screen(SaveDialog(what, default), chosen)

    def _write_json(self, path: Path) -> None:
        from doctor.model.report import report_to_json  # lazy: after the first frame: the report model (14 modules)

        self._write(path, report_to_json(self._shareable()) + "\n", "report")

    def _write_markdown(self, path: Path) -> None:
        from doctor.render.markdown import render_markdown  # lazy: Markdown is drawn only when saving, after the first frame

        self._write(path, render_markdown(self._shareable()), "Markdown")

    def _shareable(self) -> Report:
        """What a save or the clipboard gets: redacted as every report output is, unless --no-redact."""
        assert self.app.report is not None  # _ask and save() check it first
        return self.app.session.shareable(self.app.report)

    def _write(self, path: Path, text: str, what: str) -> None:
        try:
            self.app.session.save(path, text)  # the one atomic writer: whole or as it was
        except OSError as exc:
            self.app.notify(f"cannot write {path}: {exc.strerror}", severity="error")
            return
        self.app.notify(f"{what} saved to {path.resolve()}")

    def default_path(self, suffix: str) -> str:
        """--save-path for JSON, else a name stamped with the report's time."""
        if self.app.session.save_path and suffix == ".json":
            return self.app.session.save_path
        report = self.app.report
        stamp = (report.created_at if report else "").replace("-", "").replace(":", "")[:15].replace("T", "-")
        return f"v100-doctor-report-{stamp or 'now'}{suffix}"
