"""LM Studio's install read as a llama.cpp flavour (doctor/facts/engines/lm_studio.py): its home, its CLI, its
runtimes by folder name with their kind and version, and the runtime selected for GGUF; nothing there, or a
preferences file that is not JSON, is read as what it is, never an error."""

from __future__ import annotations

import json

from doctor.facts.engines.lm_studio import gather_lm_studio, runtime_gpu


def lmstudio(tmp_path, runtimes=(), preferences=None, lms=True, where=".lmstudio"):
    home = tmp_path / where
    (home / "extensions" / "backends").mkdir(parents=True)
    for name in runtimes:
        (home / "extensions" / "backends" / name).mkdir()
    (home / "extensions" / "backends" / "vendor").mkdir()  # LM Studio's CUDA libraries: not a runtime
    if lms:
        (home / "bin").mkdir()
        (home / "bin" / "lms").write_text("#!/bin/sh\n")
    if preferences is not None:
        (home / ".internal").mkdir()
        (home / ".internal" / "backend-preferences-v1.json").write_text(preferences)
    return home


def test_runtimes_their_kind_version_and_the_selected_one(tmp_path):
    pref = json.dumps([{"model_format": "gguf", "name": "llama.cpp-linux-x86_64-vulkan-avx2", "version": "2.11.0"}])
    lmstudio(tmp_path, ("llama.cpp-linux-x86_64-nvidia-cuda12-avx2-2.11.0", "llama.cpp-linux-x86_64-vulkan-avx2-2.11.0",
                        "llama.cpp-linux-x86_64-avx2-2.11.0"), pref)
    lm = gather_lm_studio(tmp_path)
    assert lm.installed and lm.lms.endswith("/bin/lms") and lm.home.endswith(".lmstudio")
    assert {(r.gpu, r.version) for r in lm.runtimes} == {("cuda12", "2.11.0"), ("vulkan", "2.11.0"), ("cpu", "2.11.0")}
    assert lm.selected == "llama.cpp-linux-x86_64-vulkan-avx2-2.11.0" and lm.in_use.label == "Vulkan llama.cpp runtime v2.11.0"


def test_the_older_cache_home_and_no_preferences(tmp_path):
    lmstudio(tmp_path, ("llama.cpp-linux-x86_64-nvidia-cuda-avx2-1.15.3",), where=".cache/lm-studio", lms=False)
    lm = gather_lm_studio(tmp_path)
    assert lm.installed and lm.selected == "" and lm.in_use.gpu == "cuda"  # the one GPU runtime


def test_nothing_there_and_a_broken_preferences_file(tmp_path):
    assert not gather_lm_studio(tmp_path).installed
    lmstudio(tmp_path, ("llama.cpp-linux-x86_64-nvidia-cuda12-avx2-1.48.0",), preferences="{not json")
    assert gather_lm_studio(tmp_path).selected == ""


def test_runtime_kinds_by_name():
    assert [runtime_gpu(n) for n in ("llama.cpp-linux-arm64-nvidia-cuda13", "llama.cpp-win-x86_64-nvidia-cuda-avx2",
                                     "llama.cpp-linux-x86_64-rocm-avx2", "llama.cpp-mac-arm64-apple-metal-advsimd",
                                     "llama.cpp-linux-x86_64-avx2")] == ["cuda13", "cuda", "rocm", "metal", "cpu"]
