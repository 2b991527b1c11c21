"""Torch facts come from a child process: a hang, a crash or a broken install cost a timeout, never the doctor."""

from __future__ import annotations

import os
import sys
import textwrap
import time

import pytest

from doctor.facts.python import torch_facts
from doctor.facts.python.torch_facts import TorchChild, facts_from_child, read_cache, write_cache


def fake_torch(tmp_path, body: str) -> dict:
    pkg = tmp_path / "torch"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent(body))
    return {**os.environ, "PYTHONPATH": str(tmp_path)}


WORKING = """
    import warnings
    __version__ = "2.11.0+cu130"
    class version:
        cuda = "13.0"
    class cuda:
        @staticmethod
        def get_arch_list(): return ["sm_75", "sm_80", "sm_90"]
        @staticmethod
        def is_available(): return True
        @staticmethod
        def device_count(): return 1
        @staticmethod
        def get_device_capability(i):
            warnings.warn("Found GPU0 Tesla V100-PCIE-16GB which is of compute capability (CC) 7.0.")
            return (7, 0)
"""


def test_working_torch_reports_version_arch_and_its_warning(tmp_path):
    data = TorchChild(30, env=fake_torch(tmp_path, WORKING)).collect()
    facts = facts_from_child(data)
    assert facts.version == "2.11.0+cu130" and facts.cuda == "13.0"
    assert facts.arch_list == ("sm_75", "sm_80", "sm_90")
    assert facts.device_capabilities == ("7.0",)
    assert any("compute capability (CC) 7.0" in w for w in facts.warnings)


def test_hanging_import_times_out_and_leaves_no_child(tmp_path):
    child = TorchChild(1.0, env=fake_torch(tmp_path, "import time\ntime.sleep(60)\n"))
    start = time.monotonic()
    data = child.collect()
    assert time.monotonic() - start < 10
    assert data.get("timeout") and "timed out" in data["error"]
    assert child.proc.poll() is not None  # killed, not orphaned
    facts = facts_from_child(data)
    assert facts.installed and "timed out" in facts.reason


@pytest.mark.parametrize("body, expect", [
    ("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n", "signal"),
    ("raise ImportError('libcudart.so.13: cannot open shared object file')\n", "libcudart"),
    ("import sys\nsys.exit(3)\n", "SystemExit"),
])
def test_crashing_import_is_reported(tmp_path, body, expect):
    data = TorchChild(30, env=fake_torch(tmp_path, body)).collect()
    assert not data["ok"] and expect in data["error"]
    assert "could not be inspected" in facts_from_child(data).reason


def test_cache_holds_static_facts_only(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    write_cache("k1", {"ok": True, "version": "2.1.2+cu121", "cuda": "12.1", "arch_list": ["sm_70"],
                       "cuda_available": True, "device_capabilities": ["7.0"], "warnings": ["w"]})
    cached = read_cache("k1")
    assert cached == {"ok": True, "version": "2.1.2+cu121", "cuda": "12.1", "arch_list": ["sm_70"]}
    facts = facts_from_child(cached, from_cache=True)
    assert facts.static_from_cache and "cache" in facts.cuda_available.reason


def test_gatherer_without_torch_says_so(monkeypatch):
    monkeypatch.setattr(torch_facts, "torch_installed", lambda python=sys.executable: False)
    facts = torch_facts.TorchGatherer().result()
    assert not facts.installed and "not installed" in facts.reason


def test_no_cache_writes_nothing_while_the_default_caches(tmp_path):
    """--no-cache: a strictly read-only run leaves no file behind (the default run, as a control, does)."""
    import subprocess

    from conftest import ROOT

    (tmp_path / "site").mkdir()
    env = fake_torch(tmp_path / "site", WORKING)
    (tmp_path / "site" / "torch" / "version.py").write_text("cuda = '13.0'\n")
    for flag, cache in (("--no-cache", tmp_path / "c1"), (None, tmp_path / "c2")):
        cache.mkdir()
        args = [sys.executable, "-m", "doctor", "--json", "--no-probe"] + ([flag] if flag else [])
        subprocess.run(args, capture_output=True, cwd=ROOT, env={**env, "XDG_CACHE_HOME": str(cache)}, timeout=60)
    assert list((tmp_path / "c1").iterdir()) == []
    assert [p.name for p in (tmp_path / "c2").iterdir()] == ["v100-doctor"]


def test_the_cache_folder_without_platformdirs_follows_the_xdg_rule(monkeypatch, tmp_path):
    """Seen on the H200 image: platformdirs absent; `--fresh` must still run (it crashed with exit 4)."""
    import builtins

    from doctor.facts.python import torch_facts

    real_import = builtins.__import__

    def no_platformdirs(name, *args, **kwargs):
        if name == "platformdirs":
            raise ModuleNotFoundError("No module named 'platformdirs'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_platformdirs)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert torch_facts.cache_dir() == tmp_path / "xdg" / "v100-doctor"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert torch_facts.cache_dir() == tmp_path / "home" / ".cache" / "v100-doctor"
