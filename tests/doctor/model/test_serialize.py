"""Facts and reports survive a JSON round trip exactly, Unknowns included."""

from __future__ import annotations

import json

import pytest
from conftest import MACHINES

from doctor.facts.replay import load_document
from doctor.model.facts import Facts
from doctor.model.serialize import LoadError, from_jsonable, to_jsonable
from doctor.model.unknown import Unknown


@pytest.mark.parametrize("path", sorted(MACHINES.glob("*.json")), ids=lambda p: p.stem)
def test_fixture_round_trip(path):
    facts = load_document(str(path)).facts
    again = from_jsonable(Facts, json.loads(json.dumps(to_jsonable(facts))))
    assert again == facts


def test_unknown_travels_with_its_reason():
    assert to_jsonable(Unknown("no GPU")) == {"unknown": "no GPU"}
    assert not Unknown("x") and str(Unknown("x")) == "unknown (x)"


def test_type_errors_name_the_path():
    with pytest.raises(LoadError, match=r"\$.facts.nvml.available: expected true/false"):
        from_jsonable(Facts, {"gathered_at": "t", "nvml": {"available": 1}, "python": {}, "host": {}}, "$.facts")


def test_a_reports_source_is_one_string_on_the_wire_and_a_typed_provenance_in_memory():
    """Issue 22: the source is parsed once, at load; an unknown form is kept as a replay of that name."""
    from doctor.model.source import LIVE, Origin, Provenance, example, replayed

    for provenance, wire in ((LIVE, "live"), (replayed("/tmp/t.json"), "replay:/tmp/t.json"),
                             (example("seed-2-exl2-4.25bpw"), "example:seed-2-exl2-4.25bpw")):
        assert to_jsonable(provenance) == wire and from_jsonable(Provenance, wire) == provenance
    assert from_jsonable(Provenance, "ticket from bob") == Provenance(Origin.REPLAY, "ticket from bob")
    assert from_jsonable(Provenance, "replay:C:/x.json").name == "C:/x.json"
