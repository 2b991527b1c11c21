"""The NVML child's answer as the parent reads it: its facts, or the reason it gave none (crash, garbage)."""

import json

from doctor.facts.nvml.child import MARKER
from doctor.facts.nvml.isolated import parse
from doctor.model.facts import GpuFacts, NvmlFacts
from doctor.model.serialize import to_jsonable
from doctor.model.unknown import Unknown


def _line(facts: NvmlFacts) -> bytes:
    return b"noise from the library\n" + (MARKER + json.dumps(to_jsonable(facts))).encode() + b"\n"


def test_the_childs_facts_come_back_whole():
    facts = NvmlFacts(available=True, driver_version="550.54.15",
                      gpus=(GpuFacts(index=0, name="Tesla V100", temperature_c=Unknown("not supported")),))
    assert parse(_line(facts), 0) == facts


def test_a_child_killed_by_a_signal_names_it():
    got = parse(b"", -11)
    assert not got.available and "SIGSEGV inside libnvidia-ml.so" in got.reason and "fix:" in got.reason


def test_no_marker_or_garbage_is_unavailable_with_the_status():
    for out in (b"", b"@@NVML_FACTS@@{not json\n", b"@@NVML_FACTS@@[1, 2]\n", b"@@NVML_FACTS@@" + b"[" * 100_000 + b"\n"):
        got = parse(out, 1)
        assert not got.available and "exited with status 1 without its facts" in got.reason


def test_nvml_is_opened_only_inside_its_children():
    """libnvidia-ml.so can hang or segfault at any call (issue 25): outside the NVML reader itself, only the children's
    entry points open it (the snapshot's child.py, the sampler's nvml_child.py through LocalGpus), and the parent
    only with an injected fake module (gather's and the sampler's `nvml_module`). Every other reader goes through
    NvmlChild (isolated.py) or the sampler's ChildGpus."""
    import ast

    from conftest import ROOT

    openers = {"gather_nvml", "NvmlSession", "LocalGpus", "load_pynvml"}
    allowed = {
        ("doctor/facts/nvml/child.py", "gather_nvml"),  # the snapshot's child
        ("doctor/facts/sampling/nvml_child.py", "LocalGpus"),  # the sampler's child
        ("doctor/facts/gather.py", "gather_nvml"),  # only with a fake module: gather_nvml(nvml_module)
        ("doctor/facts/sampling/sampler.py", "LocalGpus"),  # only with a fake module or isolated=False
        ("doctor/facts/sampling/local_gpus.py", "NvmlSession"),  # what those two use
    }
    found = set()
    for path in sorted((ROOT / "doctor").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("doctor/facts/nvml/") and rel != "doctor/facts/nvml/child.py":
            continue  # the reader itself
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
                if name in openers:
                    found.add((rel, name))
    assert found <= allowed, f"NVML opened in the doctor's own process: {sorted(found - allowed)}"
