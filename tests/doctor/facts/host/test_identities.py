"""This machine's identities are read by the gatherer (the redactor is handed them): host names, user, home and the
environment, each as the machine reports it; a report recorded elsewhere gets none of this machine's."""

from __future__ import annotations

from dataclasses import replace

from doctor.facts.host.identities import identities_for, this_machine
from doctor.model.source import Provenance
from doctor.run.examples import example_names, replay_example


def test_this_machine_reads_host_user_home_and_environment(monkeypatch):
    monkeypatch.setattr("socket.gethostname", lambda: "my-workstation-42")
    monkeypatch.setattr("socket.getfqdn", lambda: "my-workstation-42.corp.example")
    monkeypatch.setattr("getpass.getuser", lambda: "kimlee")
    monkeypatch.setenv("HOME", "/srv/people/kim")
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-value-12345")
    machine = this_machine()
    assert machine.hostnames == ("my-workstation-42", "my-workstation-42.corp.example")
    assert (machine.user, machine.home) == ("kimlee", "/srv/people/kim")
    assert ("MY_SERVICE_TOKEN", "tok-value-12345") in machine.environment
    assert "tok-value-12345" not in repr(machine)  # never printed by accident


def test_no_user_name_is_an_empty_one(monkeypatch):
    def no_user():
        raise KeyError("getpwuid(): uid not found: 1234")

    monkeypatch.setattr("getpass.getuser", no_user)
    assert this_machine().user == ""


def test_a_recorded_report_hides_its_own_names_not_this_machines():
    report = replay_example(example_names()[0])
    assert report.source.recorded and identities_for(report) is None
    assert identities_for(replace(report, source=Provenance())) == this_machine()
