"""doctor.cli.interrupted: a run cut short still leaves a report that says so and why the facts are unknown."""

from __future__ import annotations

import json
import signal

from doctor.cli.interrupted import interrupted_report
from doctor.model.plan import Plan
from doctor.model.report import parse_document, report_to_json


def test_a_run_cut_short_by_sighup_is_a_partial_report_whose_unknowns_say_why():
    report = interrupted_report(Plan(), signal.SIGHUP)
    assert report.errors == ("interrupted by SIGHUP while gathering facts: the parts not read are unknown",)
    assert report.note == "interrupted by SIGHUP while gathering"
    assert report.facts.nvml.available is False and "interrupted (SIGHUP)" in report.facts.nvml.reason
    assert report.findings and parse_document(json.loads(report_to_json(report)), "-o").report.errors == report.errors
