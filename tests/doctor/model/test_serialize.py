"""Facts and reports survive a JSON round trip exactly, Unknowns included."""

from __future__ import annotations

import json

from doctor.model.facts import Facts
from doctor.facts.replay import load_document
from doctor.model.serialize import LoadError, from_jsonable, to_jsonable
from doctor.model.unknown import Unknown
from conftest import MACHINES

import pytest


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
