"""Every engine judged as itself (issue 35): the engine-host fixtures (fixtures/machines/engine-hosts/) and the engine
fixtures (fixtures/machines/engines/), replayed. A healthy host exits 0 with no warning; a broken one's first worst
finding (what a fleet and a reader see first) is its cause; no fix for an engine that does not run on torch or
ExLlamaV2 speaks of them."""

from __future__ import annotations

import importlib
import re
import sys
from functools import lru_cache

import pytest
from conftest import MACHINES

from doctor.cli.output import exit_code_for
from doctor.engines import adapter
from doctor.facts.replay import load_document
from doctor.model.findings import SEVERITY, Finding, Status
from doctor.model.ids import CheckId
from doctor.model.report import Report
from doctor.model.source import replayed
from doctor.render.common import route_script
from doctor.render.text import render_text
from doctor.run.pipeline import diagnose

HOSTS = MACHINES / "engine-hosts"
ENGINES = MACHINES / "engines"
P, W, F, S, I = Status.PASS, Status.WARN, Status.FAIL, Status.SKIP, Status.INFO
C = CheckId

# name -> (exit code, the first worst check or None when clean, {check: status}, words in that check's summary + fix)
EXPECTED: dict[str, tuple[int, CheckId | None, dict[CheckId, Status], tuple[str, ...]]] = {
    "v100-llamacpp-no-torch-healthy": (0, None, {C.CUDA_PAIRING: P, C.ENGINE: P, C.ENGINE_BUILD: P, C.GGUF_BUDGET: P,
                                                 C.QUANT_FORMAT: P, C.EXLLAMAV2_READY: S}, ()),
    "p40-llamacpp-no-torch-healthy": (0, None, {C.COMPUTE_CAPABILITY: P, C.QUANT_FORMAT: P, C.ENGINE: P, C.GGUF_BUDGET: P},
                                      ()),
    "t4-llamacpp-no-torch-healthy": (0, None, {C.ENGINE_BUILD: P, C.GGUF_BUDGET: P}, ()),
    "rtx2080ti-llamacpp-no-torch-healthy": (0, None, {C.ENGINE_BUILD: P, C.GGUF_BUDGET: P}, ()),
    "v100-ollama-no-torch-healthy": (0, None, {C.CUDA_PAIRING: P, C.ENGINE: P, C.ENGINE_BUILD: P, C.ENGINE_LAUNCH: P}, ()),
    "p40-ollama-no-torch-healthy": (0, None, {C.CUDA_PAIRING: P, C.ENGINE: P, C.ENGINE_BUILD: P}, ()),
    "v100-vllm-0.19-healthy": (0, None, {C.CUDA_PAIRING: P, C.ENGINE: P, C.FLASH_ATTN: P}, ()),
    "t4-vllm-0.21-healthy": (0, None, {C.CUDA_PAIRING: P, C.ENGINE: P}, ()),
    "v100-tabbyapi-exl2-checkpoint-healthy": (0, None, {C.CUDA_PAIRING: P, C.ENGINE: P, C.EXLLAMAV2_READY: P},
                                              ()),
    "v100-no-engine-no-torch": (0, None, {C.CUDA_PAIRING: I, C.ENGINE: I}, ()),
    "v100-lmstudio-vulkan-healthy": (0, None, {C.CUDA_PAIRING: P, C.ENGINE: P, C.ENGINE_BUILD: P}, ()),
    "v100-lmstudio-cuda12-no-sm70": (2, C.ENGINE_BUILD, {C.CUDA_PAIRING: P, C.ENGINE: P},
                                     ("LM Studio's CUDA runtimes", "Vulkan runtime", "lms load MODEL --gpu max",
                                      "-DCMAKE_CUDA_ARCHITECTURES=70")),
    "v100-vllm-0.21-no-sm70": (2, C.CUDA_PAIRING, {C.ENGINE: F}, ("vllm<0.20",)),
    "t4-transformers-bnb": (1, C.ENGINE, {C.CUDA_PAIRING: P}, ("bitsandbytes 4-bit", "llama.cpp")),
    "v100-llama-cpp-python-cpu-wheel": (2, C.ENGINE_BUILD, {C.CUDA_PAIRING: P},
                                        ('CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=70"', "CPU")),
    "v100-ollama-forced-cpu": (2, C.ENGINE_LAUNCH, {C.ENGINE_BUILD: P}, ("OLLAMA_LLM_LIBRARY=cpu_avx2",)),
    "v100-ollama-driver-535": (2, C.CUDA_PAIRING, {C.ENGINE_BUILD: P}, ("R550", "17290")),
    "v100-32gb-llamacpp-partial-offload-fits": (1, C.ENGINE_LAUNCH, {C.GGUF_BUDGET: P, C.CUDA_PAIRING: P},
                                                ("-ngl 20", "-ngl 49: every layer fits", "the whole model fits")),
}
# words no fix may print for an engine that runs neither torch nor ExLlamaV2
TORCH_WORDS = re.compile(r"torch|exllamav2|TORCH_CUDA_ARCH_LIST|EXLLAMA", re.I)


@lru_cache(maxsize=None)
def report(path: str) -> Report:
    doc = load_document(path)
    return diagnose(doc.plan, doc.facts, source=replayed(path))


def first_worst(findings: tuple[Finding, ...]) -> Finding | None:
    """The first finding of the worst status (doctor/verdict/fleet.py's top check): what a reader meets first."""
    worst = max((f for f in findings), key=lambda f: SEVERITY[f.status], default=None)
    if worst is None or worst.status in (P, I, S):
        return None
    return next(f for f in findings if f.status == worst.status)


def test_every_host_fixture_has_expectations():
    assert {p.stem for p in HOSTS.glob("*.json")} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_host_gets_its_cause_first(name):
    code, top, statuses, words = EXPECTED[name]
    r = report(str(HOSTS / f"{name}.json"))
    got = {f.id: f for f in r.findings}
    assert int(exit_code_for(r)) == code, [(f.id, f.status, f.summary) for f in r.findings if f.status in (W, F)]
    worst = first_worst(r.findings)
    assert (worst.id if worst else None) == top, worst
    for cid, status in statuses.items():
        assert got[cid].status == status, (cid, got[cid].summary)
    text = f"{worst.summary} {worst.fix} {' '.join(worst.commands)} {' '.join(route_script(r))}" if worst else ""
    for w in words:
        assert w in text, w


@pytest.mark.parametrize("name", [n for n in sorted(EXPECTED) if "healthy" in n])
def test_a_healthy_engine_host_has_no_warning(name):
    r = report(str(HOSTS / f"{name}.json"))
    assert [f.id for f in r.all_findings() if f.status in (W, F, Status.ERROR)] == []


ALL = sorted([*HOSTS.glob("*.json"), *ENGINES.glob("*.json")])


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.stem)
def test_no_torch_or_exllamav2_word_in_a_fix_for_an_engine_that_uses_neither(path):
    r = report(str(path))
    e = r.engine_in_force
    assert e is not None
    a = adapter(e.engine)
    if a.uses_torch or a.uses_exllamav2 or e.assumed:
        pytest.skip(f"{e.engine} runs on torch")
    printed = [f"{f.fix} {' '.join(f.commands)}" for f in r.all_findings()] + route_script(r)
    assert [line for line in printed if TORCH_WORDS.search(line)] == []


def test_the_report_states_the_engine_judged_and_why():
    r = report(str(HOSTS / "v100-llama-cpp-python-cpu-wheel.json"))
    assert r.engine_in_force is not None and str(r.engine_in_force.engine) == "llama.cpp"
    assert "GGUF" in r.engine_in_force.why and not r.engine_in_force.assumed
    none = report(str(HOSTS / "v100-no-engine-no-torch.json")).engine_in_force
    assert none is not None and none.assumed
    text = render_text(report(str(HOSTS / "v100-ollama-forced-cpu.json")))
    assert "Judged as ollama: --engine" in text and "Engine: no engine named or found" in render_text(
        report(str(HOSTS / "v100-no-engine-no-torch.json")))


def test_every_host_fixture_is_what_its_generator_writes():
    sys.path[:0] = [str(HOSTS)]
    try:
        gen = importlib.import_module("make_engine_hosts")
        for name in gen.HOSTS:
            assert gen.document(name) == (HOSTS / f"{name}.json").read_text(), f"run {HOSTS.name}/make_engine_hosts.py"
    finally:
        sys.path.remove(str(HOSTS))
        sys.modules.pop("make_engine_hosts", None)


def test_sources_are_beside_each_fixture():
    for path in HOSTS.glob("*.json"):
        note = load_document(str(path)).note
        assert note.startswith("Modelled machine") and "https://" in note, path.name


