"""The three lines on top: whose machine this is (live, replayed, recorded example), what it has, and
where the run stands; `source_text` and `summary_text` say the first and the last from a report."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.widgets import Static

from doctor import __version__
from doctor.model.source import BundledExample, Origin, SavedFile, Source

if TYPE_CHECKING:  # the report model loads after the first frame
    from doctor.model.findings import GpuJudgement
    from doctor.model.report import Report


class Banner(Static):
    """`source` says what is shown, `machine` what it has; `status` what is happening now or how it ended."""

    def __init__(self, source: str, **kw: Any) -> None:
        super().__init__(**kw)
        self.source = source
        self.machine = ""
        self.status = ""
        self.compact = False  # two lines on a small terminal: what is shown and where the run stands

    def on_mount(self) -> None:
        self._paint()

    def set_source(self, source: str, machine: str = "") -> None:
        self.source, self.machine = source, machine
        self._paint()

    def set_status(self, status: str) -> None:
        self.status = status
        self._paint()

    def set_compact(self, compact: bool) -> None:
        self.compact = compact
        self._paint()

    @property
    def lines(self) -> list[str]:
        """Its three lines, uncut (the full-text view, `v`, shows them whole)."""
        return [f"v100-doctor {__version__} · {self.source}", self.machine, self.status]

    def _paint(self) -> None:
        top, machine, status = self.lines
        self.update(Text("\n".join([top, status] if self.compact else [top, machine, status])))


def source_text(report: Report | None, source: Source) -> str:
    """The banner's first line: where the shown facts come from (the report's provenance, or before it the source
    asked for)."""
    return report_source_text(report) if report is not None else _asked_source_text(source)


def report_source_text(report: Report) -> str:
    """Where a report's facts come from: this machine, a replayed file, or a recorded example."""
    src = report.source
    if src.origin is Origin.EXAMPLE:
        from doctor.render.common import source_line  # lazy: after the first frame: render.common loads the report model (15 modules)

        return source_line(report)
    if src.origin is Origin.REPLAY:
        what = "recorded facts and probe, today's checks and verdict" if report.probe is not None else \
            "recorded facts, today's checks"
        return f"replayed from {src.file_name}: {what}"
    return "this machine, live"


def _asked_source_text(source: Source) -> str:
    if isinstance(source, SavedFile):
        return f"replayed from {Path(source.path).name}: recorded facts, today's checks"
    if isinstance(source, BundledExample):
        return f"RECORDED EXAMPLE ({source.name}), not this machine"
    return "this machine, live"


def summary_text(report: Report | None) -> str:
    """How a finished run ended: the counts, each GPU's worst when there are several, and the run's own errors."""
    from doctor.render.common import summary_counts  # lazy: after the first frame: render.common loads the report model (15 modules)

    if report is None:
        return ""
    text = summary_counts(report)
    if report.gpus:  # several GPUs: each one's worst, worst first (the text report has a line per GPU)
        text += " · GPUs: " + ", ".join(_gpu_worst(g) for g in report.gpus)
    if report.errors:
        text += f" · ☠ {'; '.join(report.errors)}"
    return text


def _gpu_worst(gpu: GpuJudgement) -> str:
    """"✗ 1 cuda-pairing": a GPU's symbol and index, and the check behind a failure or warning."""
    from doctor.render.common import SYMBOLS  # lazy: after the first frame: render.common loads the report model (15 modules)

    top = gpu.top()
    named = top is not None and gpu.status.value in ("fail", "warn", "error")
    return f"{SYMBOLS[gpu.status]} {gpu.index}" + (f" {top.id}" if named and top is not None else "")
