"""The one adapter between a Run (doctor/run/run.py) and the screen: every run event, and the probe's, becomes a
Textual Message posted to the widget that draws it (the report view, the probe row), which handles each type with
`@on`; it bubbles on to the app for what the app keeps. Workers post; only the screen's thread draws.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Generic, TypeVar

from textual.message import Message

from doctor.model.events import CheckEvent, CheckFinished, ChecksChosen, CheckStarted, ProbeEvent, ReportReady

if TYPE_CHECKING:
    from textual.message_pump import MessagePump

    from doctor.model.events import RunEvent
    from doctor.model.report import Report

E = TypeVar("E")


class _RunEventMessage(Message, Generic[E]):
    """A Message that carries one run event as it came (`.event`)."""

    def __init__(self, event: E) -> None:
        super().__init__()
        self.event = event


class ChecksListed(_RunEventMessage[ChecksChosen]):
    """The checks this run will show, before any runs."""


class CheckProgress(_RunEventMessage[CheckEvent]):
    """A check started or finished."""


class RunFinished(Message):
    def __init__(self, report: Report) -> None:
        super().__init__()
        self.report = report


class RunCrashed(Message):
    """The run itself raised: a bug of the doctor, shown as such (the checks isolate their own crashes)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error


class ProbeUpdate(_RunEventMessage[ProbeEvent]):
    """The probe moved on: a phase, a rate, a GPU reading, its end."""


class ProbeEnded(Message):
    """The probe stage returned: the report with its probe, verdict and findings folded in (or None: it raised)."""

    def __init__(self, report: Report | None, error: BaseException | None = None) -> None:
        super().__init__()
        self.report, self.error = report, error


def message_for(event: RunEvent) -> Message:
    """The Message that carries one run event to the screen."""
    if isinstance(event, ChecksChosen):
        return ChecksListed(event)
    if isinstance(event, (CheckStarted, CheckFinished)):
        return CheckProgress(event)
    if isinstance(event, ReportReady):
        return RunFinished(event.report)
    return ProbeUpdate(event)


class Poster:
    """A run's subscriber, called on a worker thread: posts each event to `target` (the widget that draws it; the
    message bubbles on to the app), post_message being thread-safe. Once `halted()` (the app is quitting) nothing
    more is posted: what a worker says while the app quits is not drawn, nor written to a terminal that may be gone."""

    def __init__(self, target: MessagePump, halted: Callable[[], bool] = lambda: False) -> None:
        self.target = target
        self.halted = halted

    def __call__(self, event: RunEvent) -> None:
        self.post(message_for(event))

    def post(self, message: Message) -> None:
        """The worker's own word (it crashed, the probe stage returned), under the same rule."""
        if not self.halted():
            self.target.post_message(message)
