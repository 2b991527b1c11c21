"""Shared pieces of the TUI tests: sessions on the machine fixtures, and a probe that is a real child process.

No tests here; the TUI test modules import from it.
"""

from __future__ import annotations

import asyncio
import threading
import time

from checks.env import ENV_CHECKS
from conftest import MACHINES
from doctor.report import load_document
from doctor.tui.app import DoctorApp
from doctor.tui.session import Session

HEALTHY = "v100-pcie-16gb-healthy.json"
TORCH_211 = "v100-torch-2.11-cu130.json"


def fixture_session(name: str, checks=ENV_CHECKS, **kw) -> Session:
    """Today's checks on a recorded machine, as `--replay fixtures/machines/NAME` would run them."""
    loaded = load_document(str(MACHINES / name))
    return Session(plan=loaded.plan, facts=loaded.facts, source=f"replay:{name}", note=loaded.note, checks=checks, **kw)


def run_app(app: DoctorApp, script, size=(80, 24), timeout_s: float = 60):
    """Run `script(app, pilot)` inside App.run_test() and return what it returns; a hang fails the test."""

    async def main():
        async with app.run_test(size=size) as pilot:
            return await script(app, pilot)

    return asyncio.run(asyncio.wait_for(main(), timeout_s))


async def settle(app: DoctorApp, pilot, timeout_s: float = 30.0) -> None:
    """Wait until the checks (started once the first frame is painted) have finished and are drawn."""
    deadline = time.monotonic() + timeout_s
    while app.report is None and time.monotonic() < deadline:
        await app.workers.wait_for_complete()
        await pilot.pause(0.01)
    await pilot.pause()


# A probe worker that speaks the real protocol, starts a grandchild (as a JIT build starts nvcc) and then
# hangs, so that only a real cancel can end it.
HANGING_WORKER = r"""
import json, os, subprocess, sys, time
grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
def say(**event):
    print(json.dumps(event), flush=True)
sys.stdin.read()
say(event="phase", phase="start", message="probe worker started", total=None, protocol=1, pid=os.getpid())
say(event="phase", phase="build", message="JIT-building ExLlamaV2", total=47, grandchild=grandchild.pid)
say(event="progress", phase="build", done=12, total=47, unit="objects", message="12 of 47 units compiled")
time.sleep(600)
"""


def hanging_probe(folder, pids: list[int], watchdog: list[str], watchdog_s: float = 20.0):
    """Session.run_probe over the real runner (doctor.probe.runner) with HANGING_WORKER as its worker.

    If nothing cancels it within watchdog_s, the watchdog does (and says so in `watchdog`), so a TUI
    that forgets to cancel fails the test instead of hanging it."""
    import os
    from dataclasses import replace

    from doctor.probe.child import child_env
    from doctor.probe.protocol import ProbeSpec
    from doctor.probe.runner import run_probe

    (folder / "hanging_worker.py").write_text(HANGING_WORKER)
    env = child_env({"PYTHONPATH": os.pathsep.join([str(folder), child_env()["PYTHONPATH"]])})

    def run(report, on_event, cancel):
        def seen(event):
            pids.extend(event[k] for k in ("pid", "grandchild") if k in event)
            on_event(event)

        def fire() -> None:
            if not cancel.is_set():
                watchdog.append("fired")
                cancel.set()

        timer = threading.Timer(watchdog_s, fire)
        timer.start()
        try:
            probe = run_probe(ProbeSpec(model_path="/nonexistent"), on_event=seen, cancel=cancel, sampler_factory=None,
                              env=env, worker_module="hanging_worker")
        finally:
            timer.cancel()
        return replace(report, probe=probe)

    return run


def alive(pid: int) -> bool:
    """True while a process exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def wait_gone(pids, timeout: float = 5.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


def v100_probe(tok_s=(63.8, 64.1, 64.4)):
    """A finished probe on a V100-PCIE-16GB like the reference story's last stage: Qwen-27B-shaped EXL2 at
    3.75 bpw (12.7 GB read per token), 3 timed runs of 128 tokens, NVML busy at full clocks during decode.
    Made for the TUI's pictures: the numbers are the reference story's, not a measurement."""
    from doctor.probe.results import (DecodePass, DecodeRun, MemoryUse, ModelShape, PhaseWindow, PrefillResult,
                                      ProbeReport, ProbeResult)
    from doctor.sampling.series import GpuSample, GpuSeries, SampleSeries

    runs = tuple(DecodeRun(run=i + 1, tokens=128, seconds=round(128 / v, 4), tok_s=v, past_len=384 + 128 * i, cpu_s=1.9,
                           cpu_wall=0.95, minor_faults=0, major_faults=0, t_start_s=20.0 + 2.1 * i, t_end_s=22.0 + 2.1 * i)
                 for i, v in enumerate(tok_s))
    result = ProbeResult(
        engine="exllamav2 0.3.2", torch="2.7.1+cu126", device_name="Tesla V100-PCIE-16GB", compute_capability="7.0",
        model_path="/models/qwen-27b-exl2-3.75bpw",
        shape=ModelShape(architecture="Qwen2ForCausalLM", format="exl2", layers=64, hidden_size=5120, kv_heads=4,
                         head_dim=128, vocab_size=152064, bpw=3.75),
        memory=MemoryUse(weight_bytes_gpu=12_700_000_000, weight_bytes_cpu=1_557_135_360, cache_bytes=1_073_741_824,
                         kv_bytes_per_token=262_144.0, peak_allocated_mib=14_930.0,
                         reserved_mib=15_010.0, device_total_mib=16_160.5),
        max_seq_len=4096, max_seq_len_source="--max-seq-len", cache_mode="fp16", split="autosplit",
        attention="torch SDPA", prompt_tokens=128, prefill=PrefillResult(tokens=128, seconds=(0.171, 0.169, 0.170)),
        passes=(DecodePass(index=1, load_s=41.2, warmup_tokens=256, warmup_s=4.4, runs=runs),), reported_pass=1)
    samples = tuple(GpuSample(t_s=20.0 + 0.2 * i, sm_clock_mhz=1380, mem_clock_mhz=877, reasons=(), temperature_c=63 + i % 3,
                              power_w=231.0, util_gpu_pct=97, pcie_rx_mbs=9.0, pcie_gen=3, pcie_width=16)
                    for i in range(32))
    series = SampleSeries(started_at="2026-12-02T00:00:00+00:00", duration_s=6.4, hz=5.0,
                          gpus=(GpuSeries(index=0, name="Tesla V100-PCIE-16GB", sm_clock_max_mhz=1380, mem_clock_max_mhz=877,
                                          samples=samples),))
    return ProbeReport(status="ok", summary="64.1 tok/s decode (median of 3 x 128 tokens, spread 0.9%), prefill 753 tok/s",
                       model_path=result.model_path, result=result, samples=series,
                       windows=(PhaseWindow("decode", 19.9, 26.5, 1),), seconds=71.5)
