"""Every probe failure kind maps to a finding with a real check id, and every cause id has a label."""

from __future__ import annotations

import pytest

from doctor.model.findings import Status
from doctor.model.ids import CauseId, CheckId, FailureKind
from doctor.model.probe_results import ProbeReport
from doctor.model.verdict import CAUSE_LABELS
from doctor.verdict.failures import TITLES, failure_finding

# the kinds that name no pitfall: the catch-all "the probe failed" finding, with the log tail
UNNAMED = {FailureKind.BAD_SPEC, FailureKind.INTERNAL, FailureKind.CRASHED, FailureKind.FAILED}


def _failed(kind: FailureKind) -> ProbeReport:
    return ProbeReport(status="failed", summary="it stopped", error_kind=kind, error_phase="load",
                       error_detail="Tried to allocate 2.00 GiB")


@pytest.mark.parametrize("kind", list(FailureKind))
def test_every_kind_becomes_a_finding_with_a_check_id_and_its_title(kind):
    f = failure_finding(_failed(kind))
    assert type(f.id) is CheckId and f.title == TITLES[f.id]
    catch_all = f.id == CheckId.PROBE and f.status == Status.ERROR
    assert catch_all == (kind in UNNAMED), (kind, f.id, f.status)


def test_every_title_is_reached_by_some_kind():
    assert {failure_finding(_failed(k)).id for k in FailureKind} == set(TITLES)
    assert all(type(k) is CheckId for k in TITLES)


def test_every_cause_id_has_a_label_and_nothing_else_does():
    assert set(CAUSE_LABELS) == set(CauseId) and all(type(k) is CauseId for k in CAUSE_LABELS)
