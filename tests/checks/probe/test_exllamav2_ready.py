"""`exllamav2-ready` on edited facts: pass (built, prebuilt, JIT pending), warn, and each failure."""

from __future__ import annotations

from dataclasses import replace

import pytest
from conftest import MACHINES

from checks.base import CheckContext
from checks.probe.exllamav2_ready import CHECK, prebuilt_torch_tag
from doctor.facts.replay import load_document
from doctor.model.facts import BuildCache
from doctor.model.findings import Status
from doctor.model.plan import Plan
from doctor.model.unknown import Unknown

BASE = load_document(str(MACHINES / "v100-pcie-16gb-healthy.json")).facts
CACHE = BuildCache(root="/home/u/.cache/torch_extensions/py310_cu121", build_dir="/home/u/.cache/torch_extensions/py310_cu121/exllamav2_ext",
                   built=False, lock_age_s=None, objects=0)


def facts(build=CACHE, nvcc_version="12.1", nvcc_path="/usr/local/cuda/bin/nvcc", ninja="/usr/bin/ninja", **packages):
    py = BASE.python
    pk = {**py.packages, "exllamav2": "0.3.2", "tokenizers": "0.21.0", **packages}
    nvcc = replace(py.nvcc, version=nvcc_version, path=nvcc_path, ninja=ninja)
    return replace(BASE, python=replace(py, packages=pk, nvcc=nvcc, exllamav2_build=build))


def check(f):
    return CHECK.run(CheckContext(facts=f, plan=Plan()))


def test_a_pending_jit_build_is_announced():
    f = check(facts())
    assert f.status is Status.PASS and f.evidence["probe_can_run"] is True
    assert "JIT-compiles 47 units" in f.summary and "2-3 minutes" in f.summary
    assert f.evidence["jit_build_pending"] is True


def test_a_cached_build_needs_no_build():
    f = check(facts(build=replace(CACHE, built=True)))
    assert f.status is Status.PASS and "no JIT build on first import" in f.summary
    assert f.evidence["cached_build"] is True


def test_not_installed_is_information_and_blocks_the_probe():
    f = check(facts(exllamav2=Unknown("not installed")))
    assert f.status is Status.INFO and f.evidence["probe_can_run"] is False
    assert f.commands[-1].startswith('pip install exllamav2 tokenizers "torch==')  # keeps the torch that fits


def test_missing_tokenizers_fails():
    f = check(facts(tokenizers=Unknown("not installed")))
    assert f.status is Status.FAIL and "No module named 'tokenizers'" in f.summary


@pytest.mark.parametrize("kw, text", [
    (dict(nvcc_version="13.0"), "cannot compile for sm_70"),
    (dict(nvcc_version="13.0"), "mismatches the version that was used to compile PyTorch"),
    (dict(nvcc_version=Unknown("no nvcc"), nvcc_path=Unknown("not found")), "CUDA_HOME environment variable is not set"),
    (dict(ninja=Unknown("not on PATH")), "Ninja is required"),
])
def test_a_build_that_would_fail_says_how(kw, text):
    f = check(facts(**kw))
    assert f.status is Status.FAIL and f.evidence["probe_can_run"] is False
    assert text in f.summary


def test_a_stale_lock_would_hang_the_import():
    f = check(facts(build=replace(CACHE, lock_age_s=3600.0)))
    assert f.status is Status.FAIL and "wait forever" in f.summary
    assert f.commands[0].startswith("rm '") and f.commands[0].endswith("exllamav2_ext/lock'")


def test_a_fresh_lock_means_a_build_is_running():
    f = check(facts(build=replace(CACHE, lock_age_s=30.0)))
    assert f.status is Status.WARN and f.evidence["lock_age_s"] == 30


def test_prebuilt_wheel_must_match_torch():
    assert prebuilt_torch_tag("0.2.7+cu121.torch2.4.0") == "2.4.0"
    good = check(facts(build=replace(CACHE, prebuilt=True), exllamav2="0.2.7+cu121.torch2.1.2"))
    assert good.status is Status.PASS and "prebuilt" in good.summary
    bad = check(facts(build=replace(CACHE, prebuilt=True), exllamav2="0.2.7+cu121.torch2.4.0"))
    assert bad.status is Status.FAIL and "undefined symbol" in bad.summary


def test_an_unrecorded_build_cache_still_judges_the_toolchain():
    assert check(facts(build=None)).status is Status.PASS
    f = check(facts(build=None, nvcc_version="13.0"))
    assert f.status is Status.FAIL and "cannot compile for sm_70" in f.summary
