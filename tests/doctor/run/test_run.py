"""One Run (doctor/run/run.py): the events its subscribers get, in order, for a replay and for a live source."""

from __future__ import annotations

from conftest import MACHINES

from checks.manifest import ENV_CHECKS
from doctor.facts.replay import load_document
from doctor.facts.source import GatherOptions
from doctor.model.events import CheckFinished, ChecksChosen, CheckStarted, ReportReady
from doctor.model.source import LIVE, Origin, SavedFile, TargetCard, ThisMachine
from doctor.run.run import Run


def events_of(run: Run) -> list:
    seen: list = []
    report = run.execute(seen.append)
    assert seen[-1] == ReportReady(report)  # the report is the last event, and the one returned
    return seen


def test_a_replay_says_its_checks_then_each_check_then_the_report():
    path = str(MACHINES / "v100-torch-2.11-cu130.json")
    seen = events_of(Run(SavedFile(path), checks=ENV_CHECKS))
    chosen = seen[0]
    assert isinstance(chosen, ChecksChosen) and not chosen.gathering
    assert chosen.provenance.origin is Origin.REPLAY and chosen.provenance.name == path
    assert [c for c, _ in chosen.checks] == [c.id for c in ENV_CHECKS]
    started = [e.check_id for e in seen if isinstance(e, CheckStarted)]
    finished = [e.finding.id for e in seen if isinstance(e, CheckFinished)]
    assert started == finished == [c.id for c in ENV_CHECKS]
    report = seen[-1].report
    assert report.source == chosen.provenance and report.finding("cuda-pairing").status.value == "fail"


def test_a_live_run_lists_its_checks_before_gathering_and_again_after():
    facts = load_document(str(MACHINES / "dgx1-8x-v100.json")).facts  # eight GPUs: multi-GPU checks join after
    seen = events_of(Run(ThisMachine(), options=GatherOptions(reader=lambda: facts)))
    before, after = [e for e in seen if isinstance(e, ChecksChosen)]
    assert before.gathering and before.provenance is None
    assert not after.gathering and after.provenance == LIVE
    assert set(before.checks) < set(after.checks)  # the GPUs seen add checks the plan alone could not know
    assert seen[-1].report.source == LIVE


def test_a_target_card_is_this_host_planning_for_that_card():
    facts = load_document(str(MACHINES / "no-nvml.json")).facts
    report = Run(TargetCard("v100-pcie-16gb"), options=GatherOptions(reader=lambda: facts)).execute()
    assert report.source == LIVE and report.plan.target_gpu == "v100-pcie-16gb"


def test_an_asked_probe_is_part_of_the_run_and_a_probe_that_cannot_run_fails_it():
    """`v100-doctor probe` is a subscriber of the Run too: on a machine without a GPU the asked probe is a failure
    (a probe after the plain run's checks would only be skipped), reported before the report event."""
    from checks.manifest import PROBE_CHECKS
    from doctor.model.findings import Status
    from doctor.probe.runner import SyntheticRequest
    from doctor.run.run import ProbeRequest

    facts = load_document(str(MACHINES / "no-nvml.json")).facts
    asked = Run(ThisMachine(), checks=tuple(ENV_CHECKS) + tuple(PROBE_CHECKS), options=GatherOptions(reader=lambda: facts),
                probe=ProbeRequest(asked=True, synthetic=SyntheticRequest(format="gptq")))
    probe = events_of(asked)[-1].report.finding("probe")
    assert probe is not None and probe.status is Status.FAIL and "no usable GPU" in probe.summary
    plain = Run(ThisMachine(), checks=ENV_CHECKS, options=GatherOptions(reader=lambda: facts)).execute()
    assert plain.finding("probe") is None  # no probe asked, none taken
