"""The command palette's checks (ctrl+p): type part of a check's id or title to jump to it.

The actions (probe, save, filter, help…) come from DoctorApp.get_system_commands beside textual's own.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Protocol, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

if TYPE_CHECKING:
    from doctor.tui.report_view import ReportView


class ViewHost(Protocol):
    """The app the palette opens in (DoctorApp): its main screen's report view."""

    view: ReportView


class CheckCommands(Provider):
    """One command per check in the list: "Check: cuda-pairing (CUDA / PyTorch pairing)" opens it."""

    @property
    def _view(self) -> ReportView:
        return cast("ViewHost", self.app).view

    def _checks(self) -> list[tuple[str, str]]:
        checklist = self._view.checklist
        return [(cid, f"Check: {cid} ({checklist.title_of(cid)})") for cid in checklist.check_ids]

    async def discover(self) -> Hits:
        for cid, text in self._checks():
            yield DiscoveryHit(text, partial(self._view.show_check, cid), help=self._status(cid))

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for cid, text in self._checks():
            score = matcher.match(text)
            if score > 0:
                yield Hit(score, matcher.highlight(text), partial(self._view.show_check, cid), help=self._status(cid))

    def _status(self, check_id: str) -> str:
        finding = self._view.checklist.findings.get(check_id)
        return f"{finding.status.value}: {finding.summary}" if finding is not None else "not finished yet"
