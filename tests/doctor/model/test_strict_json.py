"""Every JSON the doctor writes is strict JSON (issue 39): no NaN or Infinity, which json.dumps writes by default
and jq, JavaScript and Go refuse. One writer (doctor.model.serialize.strict_json); the source is held to it."""

from __future__ import annotations

import ast
import json
import math

import pytest
from conftest import ROOT

from doctor.model.serialize import finite, strict_json

# json.dumps outside strict_json only where no reader of the doctor's outputs sees it: the pipes between the doctor
# and its own children, files the probe writes for an engine to load, and a canonical form used as a key
INTERNAL = {
    "doctor/model/serialize.py": "strict_json itself",
    "doctor/facts/nvml/child.py": "the NVML child's pipe to the doctor",
    "doctor/facts/python/torch_child.py": "the torch child's pipe to the doctor",
    "doctor/facts/python/torch_facts.py": "the torch child's cache file, read back by the doctor only",
    "doctor/facts/sampling/nvml_child.py": "the sampler child's pipe to the doctor",
    "doctor/facts/modeldir/config.py": "rope_scaling's canonical form, compared as text",
    "doctor/probe/protocol.py": "the probe child's pipe to the doctor",
    "doctor/probe/child_events.py": "the probe children's event pipe to the doctor",
    "doctor/probe/synthetic.py": "a synthetic model's config files, for the engine to load",
    "doctor/probe/replicate_layers.py": "a synthetic model's config files, for the engine to load",
    "doctor/probe/safetensors_writer.py": "a synthetic model's safetensors header",
    "doctor/probe/llamacpp.py": "the device script's record (python -m doctor.probe.llamacpp --json)",
    "doctor/probe/engine_gap.py": "the device script's record (python -m doctor.probe.engine_gap --json)",
}


def _json_dumps_calls(path) -> int:
    tree = ast.parse(path.read_text())
    return sum(1 for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
               and n.func.attr in ("dumps", "dump") and isinstance(n.func.value, ast.Name) and n.func.value.id == "json")


def test_every_json_the_doctor_writes_goes_through_strict_json():
    offenders = []
    for path in sorted((ROOT / "doctor").rglob("*.py")) + sorted((ROOT / "checks").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel not in INTERNAL and _json_dumps_calls(path):
            offenders.append(rel)
    assert not offenders, f"json.dumps outside strict_json (NaN would be written as NaN): {offenders}"


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_a_number_that_is_not_finite_is_written_as_null(bad):
    doc = {"a": bad, "b": [1.5, bad, {"c": (bad, 2)}], "d": "NaN", "e": True}
    text = strict_json(doc)
    assert json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} written")) == {
        "a": None, "b": [1.5, None, {"c": [None, 2]}], "d": "NaN", "e": True}


def test_finite_keeps_what_is_finite():
    doc = {"x": [0.0, -1e308, 10**400, "inf"], "y": None}
    assert finite(doc) == doc and not any(isinstance(v, float) and not math.isfinite(v) for v in finite(doc)["x"])
