"""The probe row: the probe panel and the verdict panel side by side, and the probe's state they draw.

One way in for a running probe: `feed(event)` with any typed ProbeEvent (doctor/model/events.py), which the probe
stage's ProbeUpdate messages carry (doctor/tui/messages.py); a finished report's probe and verdict come in through
`finish` (a probe run here) or `show_report` (a replay's recorded probe, a story stage). Nothing is measured or
judged here: the folding is doctor.render.panels', the verdict the report's.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from textual import on
from textual.containers import Horizontal

from doctor.model.events import ProbeEvent, ProbeFailed, ProbePhase
from doctor.render.panels import GPU_READINGS as LIVE_READINGS
from doctor.render.panels import ProbeView, VerdictView, apply_probe_event, probe_view, report_verdict_view
from doctor.tui.guards import while_attached
from doctor.tui.messages import ProbeEnded, ProbeUpdate
from doctor.tui.probe_panel import ProbePanel
from doctor.tui.verdict_panel import VerdictPanel

if TYPE_CHECKING:  # the report model loads after the first frame
    from doctor.model.report import Report


class ProbeRow(Horizontal):
    """Hidden until a probe runs or a report brings one (the class `-shown`, so the one-pane layout still hides it);
    its panels mount on first use or just after the first frame, which never shows them."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.state = ProbeView()  # what the probe panel draws
        self.verdict: VerdictView | None = None  # what the verdict panel draws

    def panels(self) -> tuple[ProbePanel, VerdictPanel]:
        """The probe and verdict panels, mounted on first use."""
        if not self.children:
            self.mount(ProbePanel(id="probe"), VerdictPanel(id="verdict"))
        return self.query_one(ProbePanel), self.query_one(VerdictPanel)

    @property
    def shown(self) -> bool:
        return self.has_class("-shown")

    def start(self) -> None:
        """A probe starts here: the row shown, the phase at its start, no verdict yet."""
        self.add_class("-shown")
        self.state = apply_probe_event(ProbeView(), ProbePhase("start", "starting the probe process…"))
        self.panels()[0].show(self.state)
        self.show_verdict(None)

    def feed(self, event: ProbeEvent) -> None:
        """One probe event, as it arrives."""
        self.state = apply_probe_event(self.state, event)
        self.panels()[0].show(self.state)
        if self.state.state == "skipped":
            self.show_verdict(None)

    @on(ProbeUpdate)
    @while_attached
    def _on_probe_update(self, message: ProbeUpdate) -> None:
        self.feed(message.event)

    @on(ProbeEnded)
    @while_attached
    def _on_probe_ended(self, message: ProbeEnded) -> None:
        """A probe stage that raised is said in the panel; a report (it returned) goes on to the app."""
        if message.error is not None:
            self.feed(ProbeFailed(f"{type(message.error).__name__}: {message.error}"))

    def finish(self, report: Report) -> None:
        """The probe run here has ended: the runner's result, with what was seen live kept, and the verdict."""
        probe = probe_view(report.probe) if report.probe is not None else None
        live = self.state
        if probe is not None and probe.state == "done":  # the runner's result, with what was seen live kept
            self.state = replace(probe, tok_s=live.tok_s or probe.tok_s,
                                 **{k: v for k in LIVE_READINGS if (v := getattr(live, k)) is not None})
        elif probe is not None:  # failed or cancelled: keep the phase and progress where it stopped
            self.state = replace(live, state=probe.state, error=probe.error)
        self.panels()[0].show(self.state)
        self.show_verdict(report_verdict_view(report))  # ExLlamaV2's verdict or the engine probe's

    def show_report(self, report: Report) -> None:
        """The panels for a finished report (a replay's recorded probe, a story stage)."""
        probe = probe_view(report.probe) if report.probe is not None else None
        verdict = report_verdict_view(report)
        self.set_class(probe is not None or verdict is not None, "-shown")
        self.state = probe or ProbeView()
        self.panels()[0].show(self.state)
        self.show_verdict(verdict)

    def show_verdict(self, view: VerdictView | None) -> None:
        self.verdict = view
        skipped = view is None and self.state.state == "skipped"
        panel = self.panels()[1]
        panel.display = not skipped  # the probe panel says once why nothing was measured
        panel.show(view)
