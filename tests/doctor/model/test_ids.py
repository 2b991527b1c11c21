"""Ids are str-valued enums: they read and write as their text, so reports keep their bytes."""

from __future__ import annotations

import json

import pytest

from doctor.model.findings import Finding, Status
from doctor.model.ids import CauseId, CheckId, FailureKind
from doctor.model.probe_results import ProbeReport
from doctor.model.serialize import from_jsonable, to_jsonable
from doctor.model.verdict import Cause


@pytest.mark.parametrize("member", [CheckId.CUDA_PAIRING, FailureKind.JIT_BUILD, CauseId.KV_READS])
def test_an_id_is_its_text_in_every_spelling(member):
    text = member.value
    assert member == text and hash(member) == hash(text)
    assert str(member) == text and f"{member}" == text and f"{member:>20}" == f"{text:>20}" and "%s" % member == text
    assert json.dumps({member: member}) == json.dumps({text: text})
    assert to_jsonable(member) == text and type(to_jsonable(member)) is str


def test_a_finding_a_cause_and_a_failure_kind_are_written_as_text_and_read_back_as_members():
    finding = Finding(id=CheckId.CUDA_PAIRING, title="t", status=Status.FAIL, summary="s", evidence={"needs": "x"})
    cause = Cause(CauseId.HOST_BOUND, "host-bound", 1.0)
    probe = ProbeReport(status="failed", summary="s", error_kind=FailureKind.OOM)
    for cls, value, field in ((Finding, finding, "id"), (Cause, cause, "id"), (ProbeReport, probe, "error_kind")):
        data = json.loads(json.dumps(to_jsonable(value)))
        assert isinstance(data[field], str)
        back = from_jsonable(cls, data)
        assert back == value and type(getattr(back, field)) is type(getattr(value, field))


def test_a_probe_that_did_not_fail_keeps_its_empty_kind():
    back = from_jsonable(ProbeReport, to_jsonable(ProbeReport(status="ok", summary="s")))
    assert back.error_kind == "" and to_jsonable(back)["error_kind"] == ""


def test_an_id_from_a_newer_doctors_report_is_kept_as_text_not_refused():
    data = to_jsonable(Finding(id=CheckId.THERMAL, title="t", status=Status.PASS, summary="s"))
    data["id"] = "a-check-added-later"
    back = from_jsonable(Finding, data)
    assert back.id == "a-check-added-later" and not isinstance(back.id, CheckId)
    assert to_jsonable(back)["id"] == "a-check-added-later"


def test_a_kind_the_worker_sends_that_this_doctor_does_not_know_is_internal():
    assert FailureKind.from_wire("oom") is FailureKind.OOM
    assert FailureKind.from_wire("cancelled") is FailureKind.CANCELLED
    assert FailureKind.from_wire("gpu-on-fire") is FailureKind.INTERNAL
    assert FailureKind.from_wire(None) is FailureKind.INTERNAL


def test_an_unknown_id_is_refused_by_the_types():
    for enum in (CheckId, FailureKind, CauseId):
        with pytest.raises(ValueError):
            enum("cuda-pairng")
