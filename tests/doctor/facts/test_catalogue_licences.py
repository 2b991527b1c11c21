"""The catalogue's licence tags (doctor/facts/catalogue/licences.json): each names a catalogued model, with its source."""

from __future__ import annotations

import json
import re

from doctor.facts.catalogue import catalogue
from doctor.facts.catalogue.licences import LICENCES_FILE, UNKNOWN, licence_of, licence_source


def test_every_tag_is_a_catalogued_model_and_well_formed():
    table = json.loads(LICENCES_FILE.read_text())
    repos = {e.repo for e in catalogue().entries}
    assert set(table["licences"]) <= repos and len(table["licences"]) > 100
    assert all(re.fullmatch(r"[a-z0-9][a-z0-9.\-]*", tag) for tag in table["licences"].values())
    assert table["source"].startswith("llmfit") and "https://github.com/AlexsJones/llmfit" in licence_source()


def test_lookup():
    assert licence_of("Qwen/Qwen2.5-7B-Instruct") == "apache-2.0"
    assert licence_of("no/such-model") == UNKNOWN
