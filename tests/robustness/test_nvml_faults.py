"""A broken libnvidia-ml.so.1 (compiled here: tests/robustness/fake_libnvidia_ml.c) on LD_LIBRARY_PATH, driving the
real CLI: a hang costs the NVML deadline, a segfault costs nothing but NVML's facts, absurd counts are bounded
before anything is allocated; every time the report is written, with the reason, and no NVML child is left."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_nvml_lib import build_fake_nvml
from robust_support import _env


@pytest.fixture(scope="module")
def fake_lib(tmp_path_factory) -> Path:
    return build_fake_nvml(tmp_path_factory.mktemp("fake-nvml"))


def _doctor(tmp: Path, lib: Path, mode: str, *args: str, timeout: float = 60) -> tuple[subprocess.CompletedProcess, float]:
    env = _env(tmp, {"LD_LIBRARY_PATH": str(lib), "FAKE_NVML": mode})
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "doctor", "--no-tui", *args], capture_output=True, env=env, cwd=tmp,
                       timeout=timeout)
    return r, time.monotonic() - t0


def _nvml_children(home: Path) -> list[int]:
    """NVML children started by a doctor of this test (its HOME), whoever runs beside it."""
    found = []
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and b"doctor.facts.nvml.child" in Path(f"/proc/{pid}/cmdline").read_bytes() \
                    and f"HOME={home}".encode() in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
                found.append(int(pid))
        except OSError:
            pass
    return found


@pytest.mark.parametrize("mode, words", [
    ("crash", "NVML crashed the process reading it (SIGSEGV"),
    ("hang", "NVML did not answer within 0.5 s"),
    ("count", "device_count 4.295e+09 is outside what a real one can be"),
])
def test_a_broken_nvml_leaves_a_report_with_the_reason(tmp_path, fake_lib, mode, words):
    out = tmp_path / "report.json"
    timeout = "0.5" if mode == "hang" else "10"  # the hang waits it out; the others must not meet it on a busy machine
    r, took = _doctor(tmp_path, fake_lib, mode, "--nvml-timeout", timeout, "-o", str(out))
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode == 2, err  # gpu-present fails: no usable GPU, with the reason
    assert "Traceback" not in err
    assert took < 20, took
    report = json.loads(out.read_text())
    assert words in report["facts"]["nvml"]["reason"]
    assert words in r.stdout.decode("utf-8", "replace").replace("\n", " ")
    assert not _nvml_children(tmp_path), "an NVML child outlived the doctor"


def test_two_to_the_31_mig_slots_are_not_walked(tmp_path, fake_lib):
    out = tmp_path / "report.json"
    r, took = _doctor(tmp_path, fake_lib, "mig", "--nvml-timeout", "10", "-o", str(out))
    assert b"Traceback" not in r.stderr
    gpu = json.loads(out.read_text())["facts"]["nvml"]["gpus"][0]
    assert gpu["mig_mode"] == "enabled"
    assert "mig_device_count" in gpu["mig_devices"]["unknown"]
    assert took < 20, took


def test_a_working_fake_nvml_is_read_through_the_child(tmp_path, fake_lib):
    """The control: the same library answering normally gives its GPU, so the failures above are the faults'."""
    out = tmp_path / "report.json"
    r, _ = _doctor(tmp_path, fake_lib, "ok", "-o", str(out))
    assert b"Traceback" not in r.stderr
    nvml = json.loads(out.read_text())["facts"]["nvml"]
    assert nvml["available"] is True and nvml["gpus"][0]["name"] == "Tesla V100-SXM2-16GB"
    assert nvml["driver_version"] == "550.54.15"



@pytest.mark.parametrize("mode", ["crash", "hang"])
def test_watch_on_a_broken_nvml_samples_nothing_from_it_and_reports(tmp_path, fake_lib, mode):
    """watch opens NVML in its own process only after the snapshot's child read it and lived."""
    out = tmp_path / "watch.json"
    env = _env(tmp_path, {"LD_LIBRARY_PATH": str(fake_lib), "FAKE_NVML": mode})
    r = subprocess.run([sys.executable, "-m", "doctor", "watch", "--seconds", "1", "--nvml-timeout", "0.5" if mode == "hang" else "10", "-o", str(out)],
                       capture_output=True, env=env, cwd=tmp_path, timeout=60)
    assert r.returncode == 2 and b"Traceback" not in r.stderr, r.stderr
    facts = json.loads(out.read_text())["facts"]
    assert "NVML" in facts["nvml"]["reason"] and facts["samples"]["nvml_reason"].startswith("NVML not read: ")


def test_a_gpu_lost_while_gathering_fails_gpu_present_with_the_hardware_fix(tmp_path, fake_lib):
    """Lost after its name was read: not "not offered by the driver" and not exit 0 (issue 25, class 8)."""
    out = tmp_path / "report.json"
    r, _ = _doctor(tmp_path, fake_lib, "lostlater", "-o", str(out))
    assert r.returncode == 2, r.stderr
    present = next(f for f in json.loads(out.read_text())["findings"] if f["id"] == "gpu-present")
    assert present["status"] == "fail" and "no longer answer NVML" in present["summary"]
    assert "hardware or power fault" in present["fix"]


def test_a_gpu_lost_while_watch_samples_fails_gpu_present(tmp_path, fake_lib):
    out = tmp_path / "watch.json"
    env = _env(tmp_path, {"LD_LIBRARY_PATH": str(fake_lib), "FAKE_NVML": "lostsampling"})
    r = subprocess.run([sys.executable, "-m", "doctor", "watch", "--seconds", "1", "-o", str(out)],
                       capture_output=True, env=env, cwd=tmp_path, timeout=60)
    assert r.returncode == 2 and b"Traceback" not in r.stderr, r.stderr
    present = next(f for f in json.loads(out.read_text())["findings"] if f["id"] == "gpu-present")
    assert present["status"] == "fail" and "while sampling" in present["summary"]
    assert "hardware or power fault" in present["fix"]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_nvml_hangs_ends_the_run_in_2_s_with_o_written(tmp_path, fake_lib, sig):
    out = tmp_path / "partial.json"
    env = _env(tmp_path, {"LD_LIBRARY_PATH": str(fake_lib), "FAKE_NVML": "hang"})
    p = subprocess.Popen([sys.executable, "-m", "doctor", "--no-tui", "-o", str(out)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    deadline = time.monotonic() + 20
    while not any(_parent(c) == p.pid for c in _nvml_children(tmp_path)) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # the child is inside the hanging nvmlInit by now
    t0 = time.monotonic()
    p.send_signal(sig)
    _, err = p.communicate(timeout=20)
    assert p.returncode == 128 + sig and b"Traceback" not in err, err
    assert time.monotonic() - t0 < 2.0
    assert json.loads(out.read_text())["facts"]["nvml"]["available"] is False
    time.sleep(0.2)
    assert not _nvml_children(tmp_path), "an NVML child outlived the doctor"


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return -1
