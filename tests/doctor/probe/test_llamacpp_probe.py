"""The llama.cpp probe's parent: outcomes (ok, silent death, error, timeout), settling, llama.cpp's log lines."""

from __future__ import annotations

import json
import os
import stat

from doctor.model.engine_probe import LlamaCppRun
from doctor.probe.llamacpp import ProbeOptions, parse_log, run_bench, run_python, settle

LOG = """load_tensors: offloaded 65/65 layers to GPU
load_tensors:        CUDA0 model buffer size = 15164.43 MiB
load_tensors:   CPU_Mapped model buffer size =   417.66 MiB
llama_kv_cache:      CUDA0 KV buffer size =  1024.00 MiB
sched_reserve:      CUDA0 compute buffer size =   363.50 MiB
sched_reserve:  CUDA_Host compute buffer size =    10.00 MiB
"""
NO_SAMPLER = {"sampler": lambda index, pid: None}


def fake(tmp_path, body: str, name: str = "fake") -> str:
    p = tmp_path / name
    (tmp_path / "log.txt").write_text(LOG)
    p.write_text(f"#!/bin/sh\ncat {tmp_path / 'log.txt'} >&2\n{body}\n")
    p.chmod(p.stat().st_mode | stat.S_IEXEC)
    return str(p)


def sample(i: int, wall: float, perf: float) -> str:
    return "echo '" + json.dumps({"event": "sample", "run": i, "tokens": 128, "tok_s_wall": wall, "tok_s_perf": perf}) + "'"


def test_parse_log_sums_devices_and_reads_the_offload_line():
    buffers, off = parse_log(LOG)
    assert buffers == {"model": {"CUDA0": 15164.43, "CPU_Mapped": 417.66}, "kv": {"CUDA0": 1024.0},
                       "compute": {"CUDA0": 363.5, "CUDA_Host": 10.0}}
    assert off == "offloaded 65/65 layers to GPU"


def test_settle_drops_a_slow_first_run_only():
    runs = [LlamaCppRun(128, w) for w in (70.0, 92.0, 92.5, 91.8)]
    kept, dropped = settle(runs)
    assert dropped == 1 and [r.tok_s_wall for r in kept] == [92.0, 92.5, 91.8]
    assert settle([LlamaCppRun(128, w) for w in (92.0, 91.0, 92.5)])[1] == 0


def test_settle_keeps_a_fast_first_run_and_a_noisy_decode_whole():
    """The H200's Transformers + bitsandbytes runs of 2026-12-03 (benchmarks/results/transformers-h200/), as recorded:
    the old rule dropped the three first runs, each "off" the slower rest, and reported 112.76 tok/s, the median of
    the two slowest; the independent timing of the same model in the same call gave 128.95 and 134.26."""
    noisy = [129.68684469990873, 134.41198630312843, 130.15387297242788, 105.21114015729428, 120.30841091214572]
    kept, dropped = settle([LlamaCppRun(128, w) for w in noisy])
    assert dropped == 0 and len(kept) == 5
    assert settle([LlamaCppRun(128, w) for w in (110.0, 92.0, 92.5, 91.8)])[1] == 0  # faster first: no ramp


def test_ok_run_with_its_own_clock_against_the_perf_counters(tmp_path):
    body = "\n".join([sample(0, 80.0, 81.0), sample(1, 92.0, 93.0), sample(2, 92.4, 93.1), sample(3, 92.2, 93.2),
                      "echo '{\"event\": \"done\"}'"])
    p = run_python("/m/x.gguf", ProbeOptions(runs=4), python=fake(tmp_path, body), **NO_SAMPLER)
    assert p.outcome == "ok" and p.dropped_runs == 1 and p.median_tok_s == 92.2
    assert p.wall_vs_perf_pct == round(100 * (92.2 / 93.1 - 1), 2)
    assert p.buffers_mib["model"]["CUDA0"] == 15164.43 and p.offloaded.startswith("offloaded 65/65")


def test_a_silent_death_is_its_own_outcome(tmp_path):
    p = run_python("/m/x.gguf", ProbeOptions(), python=fake(tmp_path, "echo '{\"event\": \"phase\"}'\nkill -SEGV $$"),
                   **NO_SAMPLER)
    assert p.outcome == "died-silently" and "SIGSEGV" in p.error and "compute buffer size" in p.error
    assert p.median_tok_s is None


def test_an_error_the_child_reports_and_a_timeout(tmp_path):
    err = "echo '{\"event\": \"error\", \"kind\": \"model-load\", \"message\": \"NULL\"}'\nexit 4"
    assert run_python("/m/x.gguf", ProbeOptions(), python=fake(tmp_path, err), **NO_SAMPLER).error == "model-load: NULL"
    slow = run_python("/m/x.gguf", ProbeOptions(timeout_s=1), python=fake(tmp_path, "sleep 5", "slow"), **NO_SAMPLER)
    assert slow.outcome == "timeout"


def test_llama_bench_samples_per_run(tmp_path):
    row = {"n_prompt": 0, "n_gen": 128, "avg_ts": 92.67, "samples_ts": [92.2, 93.3, 93.0, 92.5, 92.4]}
    p = run_bench("/m/x.gguf", ProbeOptions(), fake(tmp_path, f"echo '{json.dumps(row)}'", "llama-bench"), **NO_SAMPLER)
    assert p.outcome == "ok" and p.backend == "llama-bench" and p.median_tok_s == 92.5 and p.wall_vs_perf_pct is None


def test_missing_binary_is_not_installed(tmp_path):
    p = run_bench("/m/x.gguf", ProbeOptions(), str(tmp_path / "nope"), **NO_SAMPLER)
    assert p.outcome == "not-installed" and os.path.basename(p.error.split(":")[0]) == "nope"
