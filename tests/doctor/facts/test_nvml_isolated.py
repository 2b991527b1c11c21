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
