"""NVML failing *during* a `watch` window (issue 25, its last class): the fake libnvidia-ml.so.1
(tests/robustness/fake_libnvidia_ml.c) answers the first N samples, then its next reading hangs or segfaults.
watch samples NVML in a child with a deadline per sample, so the run ends within that deadline (+2 s) with the
report, -o and --json written and the samples so far kept; a signal during a hung sample ends it within 2 s; and
no sampler child outlives the doctor."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT
from fake_nvml_lib import build_fake_nvml
from robust_support import _env

pytestmark = [pytest.mark.skipif(sys.platform != "linux", reason="a fake libnvidia-ml.so.1 and /proc"),
              pytest.mark.xdist_group("terminal")]

SAMPLES_BEFORE = 3  # FAKE_NVML_AFTER: whole samples before the fault
HZ = 10.0


@pytest.fixture(scope="module")
def fake_lib(tmp_path_factory) -> Path:
    return build_fake_nvml(tmp_path_factory.mktemp("fake-nvml-watch"))


def _watch_env(home: Path, lib: Path, mode: str) -> dict:
    return _env(home, {"LD_LIBRARY_PATH": str(lib), "FAKE_NVML": mode, "FAKE_NVML_AFTER": str(SAMPLES_BEFORE)})


# watch as it is, on a recorded V100's facts: the snapshot's own NVML child (which --nvml-timeout also bounds, and
# whose faults tests/robustness/test_nvml_faults.py covers) is left out, so the deadline here is the sampler's alone;
# the sampler, its NVML child and the fake libnvidia-ml.so.1 are the real ones
WATCH = """
import sys
from dataclasses import replace
import doctor.run.pipeline as pipeline
from doctor.facts.replay import load_document

facts = replace(load_document({facts!r}).facts, samples=None)
pipeline.gather = lambda plan, options=None: facts
from doctor.cli import main
sys.exit(main(sys.argv[1:]))
"""
RECORDED = ROOT / "fixtures" / "samples" / "v100-decode-healthy.json"


def _watch_cmd(out: Path, *args: str) -> list[str]:
    return [sys.executable, "-c", WATCH.format(facts=str(RECORDED)), "watch", "--hz", f"{HZ:g}", "--json", "-o",
            str(out), *args]


def _sampler_children(home: Path) -> list[int]:
    """NVML sampler children started by a doctor of this test (its HOME), whoever runs beside it."""
    found = []
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and b"doctor.facts.sampling.nvml_child" in Path(f"/proc/{pid}/cmdline").read_bytes() \
                    and f"HOME={home}".encode() in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
                found.append(int(pid))
        except OSError:
            pass
    return found


def _present(doc: dict) -> dict:
    return next(f for f in doc["findings"] if f["id"] == "gpu-present")


@pytest.mark.parametrize("mode, words", [
    ("hangsampling", f"NVML stopped answering after {SAMPLES_BEFORE} samples: no answer within 0.5 s"),
    ("crashsampling", f"NVML crashed after {SAMPLES_BEFORE} samples (SIGSEGV inside libnvidia-ml.so"),
])
def test_nvml_failing_mid_watch_ends_it_with_the_report_and_the_samples_so_far(tmp_path, fake_lib, mode, words):
    out = tmp_path / "watch.json"
    t0 = time.monotonic()
    r = subprocess.run(_watch_cmd(out, "--seconds", "30", "--nvml-timeout", "0.5"), capture_output=True,
                       env=_watch_env(tmp_path, fake_lib, mode), cwd=tmp_path, timeout=20)
    took = time.monotonic() - t0
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode == 2, err  # gpu-present fails: the driver stopped answering (not 4, not the signal's)
    assert "Traceback" not in err and words in err
    doc = json.loads(out.read_text())
    assert json.loads(r.stdout) == doc  # --json and -o both written, the same report
    assert any(words in e for e in doc["errors"]), doc["errors"]
    series = doc["facts"]["samples"]
    assert len(series["gpus"][0]["samples"]) == SAMPLES_BEFORE  # what was sampled before the fault is kept
    assert words in series["nvml_stopped"]
    present = _present(doc)
    assert present["status"] == "fail" and words in present["summary"] and "nvidia-smi" in present["fix"]
    # the window ends within the deadline (0.5 s) + 2 s of the last sample, not at 30 s
    ended_after = series["duration_s"] - series["gpus"][0]["samples"][-1]["t_s"]
    assert ended_after < 0.5 + 2, series["duration_s"]
    assert took < 15, took
    assert not _sampler_children(tmp_path), "an NVML sampler child outlived the doctor"


def test_sigint_and_sigterm_during_a_hung_sample_end_watch_within_2_s_with_outputs(tmp_path, fake_lib):
    """Both runs at once (each waits on its hung sample, so they hardly compete for the CPU)."""
    runs = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        home = tmp_path / sig.name
        home.mkdir()
        p = subprocess.Popen(_watch_cmd(home / "watch.json", "--seconds", "60", "--nvml-timeout", "30"),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_watch_env(home, fake_lib, "hangsampling"),
                             cwd=home)
        runs[sig] = (p, home)
    for p, _ in runs.values():
        seen = b""
        while b"watching" not in seen:  # sampling has started
            line = p.stderr.readline()
            assert line, seen + p.communicate(timeout=5)[1]
            seen += line
    time.sleep(SAMPLES_BEFORE / HZ + 0.4)  # the sample after the last whole one hangs by now
    t0 = time.monotonic()
    for sig, (p, _) in runs.items():
        p.send_signal(sig)
    for sig, (p, home) in runs.items():
        stdout, err = p.communicate(timeout=20)
        took = time.monotonic() - t0
        assert p.returncode == 128 + sig and b"Traceback" not in err, err
        assert took < 2.0, (sig.name, took)
        doc = json.loads((home / "watch.json").read_text())
        assert json.loads(stdout) == doc
        assert len(doc["facts"]["samples"]["gpus"][0]["samples"]) == SAMPLES_BEFORE
        assert any(e.startswith("interrupted") for e in doc["errors"]), doc["errors"]
    time.sleep(0.2)
    for _, home in runs.values():
        assert not _sampler_children(home), "an NVML sampler child outlived the doctor"
