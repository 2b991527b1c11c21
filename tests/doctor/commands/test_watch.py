"""`v100-doctor watch`: bad pids, a pid that exits mid-way, Ctrl-C, and never touching the watched process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import replace

import psutil
import pytest
from conftest import ROOT, run_cli

from doctor.cli import main
from doctor.facts.replay import load_document

HEALTHY = load_document(str(ROOT / "fixtures" / "samples" / "v100-decode-healthy.json")).facts


class FakeSampler:
    """Stands in for the NVML sampler: replays the healthy fixture's series; can 'lose' its pid."""

    exit_after_s: float | None = None
    interrupt: bool = False
    nvml_stops_after_s: float | None = None  # NVML hangs then: the real sampler's nvml_failure says so
    STOPPED = "NVML stopped answering after 2 samples: no answer within 15 s (a call into libnvidia-ml.so hangs)"

    def __init__(self, gpu_indices, pids=None, hz=5.0, nvml_refused="", nvml_timeout_s=15.0):
        self.pids, self.hz, self.t0 = tuple(pids or ()), hz, time.monotonic()
        self.stop_wait_s = "not stopped"

    def start(self):
        return self

    @property
    def nvml_failure(self):
        stops = self.nvml_stops_after_s
        return self.STOPPED if stops is not None and self.elapsed_s > stops else ""

    @property
    def elapsed_s(self):
        return time.monotonic() - self.t0

    def latest(self, index):
        return HEALTHY.samples.gpus[0].samples[-1]

    def watched_all_exited(self):
        if self.interrupt and self.elapsed_s > 0.2:
            raise KeyboardInterrupt  # as if the user pressed Ctrl-C while watch waits
        return self.exit_after_s is not None and self.elapsed_s > self.exit_after_s

    def stop(self, wait_s=None):
        type(self).stop_wait_s = wait_s
        n = 2 if self.nvml_failure else max(1, int(self.elapsed_s * 5))
        g = HEALTHY.samples.gpus[0]
        return replace(HEALTHY.samples, duration_s=round(self.elapsed_s, 2), watched_pids=self.pids,
                       gpus=(replace(g, samples=g.samples[:n]),), nvml_stopped=self.nvml_failure)


@pytest.fixture
def fake_machine(monkeypatch):
    monkeypatch.setattr("doctor.facts.sampling.sampler.Sampler", FakeSampler)
    monkeypatch.setattr("doctor.run.pipeline.gather", lambda plan, options=None: replace(HEALTHY, samples=None))
    FakeSampler.exit_after_s, FakeSampler.interrupt, FakeSampler.nvml_stops_after_s = None, False, None
    return FakeSampler


@pytest.fixture
def child():
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    yield p
    p.kill()  # the test's own child, ended by its id
    p.wait()


def free_pid() -> int:
    pid = 4_000_000
    while psutil.pid_exists(pid):
        pid -= 1
    return pid


def test_help_teaches_read_only_use():
    r = run_cli("watch", "--help")
    assert r.returncode == 0 and "never signalled" in r.stdout and "--pid PID" in r.stdout and "exit codes of watch:" in r.stdout


def test_a_pid_that_does_not_exist_is_a_usage_error():
    pid = free_pid()
    r = run_cli("watch", "--pid", str(pid), "--seconds", "1")
    assert r.returncode == 3 and f"no process with pid {pid} is running" in r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""


def test_another_users_pid_is_refused_with_how_to_run_it(monkeypatch, capsys):
    monkeypatch.setattr("os.getuid", lambda: 54321)  # we are someone else now; our own pid is not ours
    code = main(["watch", "--pid", str(os.getpid()), "--seconds", "1"])
    err = capsys.readouterr().err
    assert code == 3 and "not to you" in err and "sudo -u" in err


@pytest.mark.parametrize("args, text", [
    (["--seconds", "0"], "must be between 1 and 3600"),
    (["--hz", "50"], "must be between 0.2 and 10"),
    (["--config", "/nonexistent/serve.py"], "no such file"),
])
def test_bad_inputs_name_the_problem(capsys, args, text, fake_machine):
    code = main(["watch", *args])
    assert code == 3 and text in capsys.readouterr().err


def test_a_pid_that_exits_mid_way_gives_a_partial_report_and_exit_3(capsys, child, fake_machine):
    fake_machine.exit_after_s = 0.3
    code = main(["watch", "--pid", str(child.pid), "--seconds", "20", "--json"])
    out, err = capsys.readouterr()
    assert code == 3 and f"pid {child.pid} exited after" in err
    doc = json.loads(out)
    assert doc["errors"] and "exited after" in doc["errors"][0]
    assert {f["id"] for f in doc["findings"]} == {"gpu-present", "thermal", "cpu-offload", "gpu-processes",
                                                  "pcie-link", "gpu-memory-health"}
    assert doc["facts"]["samples"]["gpus"][0]["samples"]  # what was sampled is kept


def test_ctrl_c_reports_what_was_sampled(capsys, child, fake_machine):
    fake_machine.interrupt = True
    code = main(["watch", "--pid", str(child.pid), "--seconds", "20"])
    out, err = capsys.readouterr()
    assert code == 130 and "interrupted after" in err
    assert "[✓] thermal: No throttling under load" in out and "Sampled" in out
    assert fake_machine.stop_wait_s is not None and fake_machine.stop_wait_s < 1  # a hung NVML call waits no more


def test_nvml_stopping_mid_window_ends_watch_with_a_failed_gpu_present(capsys, fake_machine):
    """The sampler's NVML child stopped answering: watch ends at once (not after --seconds), exit 2, reason named."""
    fake_machine.nvml_stops_after_s = 0.3
    t0 = time.monotonic()
    code = main(["watch", "--seconds", "20", "--json"])
    out, err = capsys.readouterr()
    assert code == 2 and time.monotonic() - t0 < 5
    assert "NVML stopped answering after 2 samples" in err and "the window ended after" in err
    doc = json.loads(out)
    present = next(f for f in doc["findings"] if f["id"] == "gpu-present")
    assert present["status"] == "fail" and FakeSampler.STOPPED in present["summary"] and "Xid" in present["fix"]
    assert len(doc["facts"]["samples"]["gpus"][0]["samples"]) == 2 and doc["errors"][0].startswith(FakeSampler.STOPPED)


def test_watch_report_has_findings_samples_and_the_launch_config(tmp_path, capsys, child, fake_machine):
    cfg = tmp_path / "serve.py"
    cfg.write_text("model = AutoModelForCausalLM.from_pretrained(p, device_map='auto')\n")
    report = tmp_path / "watch.json"
    code = main(["watch", "--pid", str(child.pid), "--seconds", "1", "--config", str(cfg), "-o", str(report), "-v"])
    out = capsys.readouterr().out
    assert code == 1  # device_map='auto' alone is a warning
    doc = json.loads(report.read_text())
    assert doc["facts"]["launch_config"]["hints"][0]["setting"] == "device_map"
    assert doc["facts"]["samples"]["watched_pids"] == [child.pid]
    assert "[!] cpu-offload:" in out and "t_s    SM   mem" in out  # -v shows the raw samples


def test_watch_never_signals_the_watched_process(child, monkeypatch, capsys):
    """Real sampler (NVML if present), real psutil, with every way to signal a process booby-trapped."""
    def forbidden(*a, **k):
        raise AssertionError("watch tried to signal or change a process")

    for name in ("kill", "killpg", "setpriority"):
        if hasattr(os, name):
            monkeypatch.setattr(os, name, forbidden)
    for name in ("send_signal", "terminate", "kill", "suspend", "resume", "nice", "ionice", "cpu_affinity"):
        monkeypatch.setattr(psutil.Process, name, forbidden)
    monkeypatch.setattr("doctor.run.pipeline.gather", lambda plan, options=None: replace(HEALTHY, samples=None))
    code = main(["watch", "--pid", str(child.pid), "--seconds", "1", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code in (0, 1, 2) and child.poll() is None  # still running, untouched
    procs = doc["facts"]["samples"]["processes"]
    assert procs[0]["pid"] == child.pid and procs[0]["samples"] and procs[0]["exited_at_s"] is None


def test_a_missing_model_directory_is_a_usage_error(capsys, fake_machine):
    code = main(["watch", "--model", "/nonexistent/qwen27b", "--seconds", "1"])
    assert code == 3 and "--model /nonexistent/qwen27b" in capsys.readouterr().err


def test_watch_config_with_an_api_key_is_redacted_in_json_and_o(tmp_path, capsys, child, fake_machine):
    """Issue 25 item 6: `watch --config serve.sh` copied the server's --api-key into --json and -o."""
    cfg = tmp_path / "serve.sh"
    cfg.write_text("python -m vllm.entrypoints.openai.api_server --cpu-offload-gb 4 --api-key tabbysecret-0042\n")
    report = tmp_path / "watch.json"
    main(["watch", "--pid", str(child.pid), "--seconds", "1", "--config", str(cfg), "-o", str(report), "--json"])
    out = capsys.readouterr().out
    assert "--cpu-offload-gb 4 --api-key" in report.read_text()  # the line is there, its secret is not
    assert "tabbysecret-0042" not in out and "tabbysecret-0042" not in report.read_text()
    main(["watch", "--pid", str(child.pid), "--seconds", "1", "--config", str(cfg), "--json", "--no-redact"])
    assert "tabbysecret-0042" in capsys.readouterr().out  # the search above can fail


def test_watch_without_a_gpu_says_so_at_once(monkeypatch, capsys):
    """No GPU: one line and exit 3 before any sampling, instead of a 30 s window of nothing (issue 26)."""
    no_gpu = load_document(str(ROOT / "fixtures" / "machines" / "no-nvml.json")).facts
    monkeypatch.setattr("doctor.run.pipeline.gather", lambda plan, options=None: no_gpu)
    started = []
    monkeypatch.setattr("doctor.facts.sampling.sampler.Sampler", lambda *a, **k: started.append(a))
    t0 = time.monotonic()
    assert main(["watch", "--seconds", "30"]) == 3
    err = capsys.readouterr().err
    assert time.monotonic() - t0 < 10 and not started
    assert "watch samples a GPU through NVML, and this machine has none" in err and "Traceback" not in err


def test_watch_on_a_gpu_index_the_machine_lacks_names_the_ones_it_has(fake_machine, capsys):
    assert main(["watch", "--gpu", "3", "--seconds", "1"]) == 3
    assert "--gpu 3: this machine has GPU 0" in capsys.readouterr().err
