"""What the sampler itself costs: CPU per second of sampling, and its overhead on a GPU decode loop.

    python3 benchmarks/sampler_cost.py                 # CPU cost; plus GPU overhead when torch+CUDA exist
    python3 benchmarks/sampler_cost.py --out cost.json
    LD_LIBRARY_PATH=DIR_WITH_A_FAKE_LIBNVIDIA_ML python3 benchmarks/sampler_cost.py --isolation-only

0. (with --isolation or --isolation-only) What reading NVML in the sampler's child costs against reading it in this process: windows taken in
   turn with `isolated=True` and `isolated=False`, at 5 and 10 Hz; CPU from getrusage (this process, and
   the reaped child), so the child's start-up, its JSON answers and the parent's decoding are all counted.
   The NVML calls themselves cost the same either way (they only move), so on a machine without a GPU
   a fake libnvidia-ml.so.1 (tests/robustness/fake_libnvidia_ml.c) isolates the boundary's cost.
1. CPU per second: the sampler's own CPU time (its thread's time.thread_time, plus what its NVML child
   reports for answering the requests) over a window, at 5 and 10 Hz, watching this process's pid.
2. GPU overhead: tokens/s of benchmarks/decode_loop.py's loop in windows taken in turn with no
   sampler, with a sampler in a separate process (how `watch` and the probe's runner use it), and
   with a sampler thread inside the decoding process itself (worst case: it shares the GIL).
   Overhead = 1 - median(with) / median(without); the spread of the no-sampler windows is printed
   beside it, since an overhead smaller than that spread is noise. The target is under 1%.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from doctor.facts.sampling.sampler import Sampler  # noqa: E402

SAMPLER_PROCESS = ("import sys, time; from doctor.facts.sampling.sampler import Sampler; "
                   "s = Sampler([0], pids=[int(sys.argv[1])], hz=float(sys.argv[2])).start(); "
                   "sys.stdout.write('ready\\n'); sys.stdout.flush(); sys.stdin.readline(); s.stop()")


def _rusage_cpu_s() -> tuple[float, float]:
    import resource  # lazy: POSIX only, and only for the isolation comparison

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def isolation_cost(seconds: float, rounds: int) -> list[dict]:
    """CPU per second of sampling with NVML in the child and in this process, windows taken in turn."""
    rows = []
    for hz in (5.0, 10.0):
        took: dict[bool, list[tuple[float, float, float, int, float]]] = {True: [], False: []}
        for _ in range(rounds):
            for isolated in (True, False):
                me0, kids0 = _rusage_cpu_s()
                sampler = Sampler([0], hz=hz, isolated=isolated).start()
                time.sleep(seconds)
                series = sampler.stop()
                me1, kids1 = _rusage_cpu_s()
                ticks = len(series.gpus[0].samples) if series.gpus else 0
                took[isolated].append((me1 - me0, kids1 - kids0, series.duration_s, ticks, sampler.nvml_child_cpu_s or 0.0))
        for isolated, runs in took.items():
            parent, child = sum(r[0] for r in runs), sum(r[1] for r in runs)
            window, ticks, answering = sum(r[2] for r in runs), sum(r[3] for r in runs), sum(r[4] for r in runs)
            rows.append({"hz": hz, "nvml": "child" if isolated else "in-process", "windows": rounds,
                         "seconds": round(window, 1), "ticks": ticks,
                         "parent_cpu_ms_per_tick": round(parent * 1000 / max(1, ticks), 3),
                         "child_cpu_ms_per_tick": round(answering * 1000 / max(1, ticks), 3),  # its answers only
                         "child_start_cpu_ms": round((child - answering) * 1000 / rounds, 1),  # once per window
                         "total_cpu_ms_per_s": round((parent + child) * 1000 / window, 2)})
    return rows


def cpu_cost(seconds: float) -> list[dict]:
    rows = []
    for hz in (5.0, 10.0):
        sampler = Sampler([0], pids=[os.getpid()], hz=hz).start()
        time.sleep(seconds)
        series = sampler.stop()
        ticks = len(series.gpus[0].samples) if series.gpus else len(series.processes[0].samples)
        rows.append({"hz": hz, "seconds": series.duration_s, "ticks": ticks, "cpu_s": series.sampler_cpu_s,
                     "cpu_ms_per_s": round(series.sampler_cpu_s * 1000 / series.duration_s, 2),
                     "cpu_ms_per_tick": round(series.sampler_cpu_s * 1000 / max(1, ticks), 3),
                     "gpus_sampled": len(series.gpus), "nvml": series.nvml_reason or "ok"})
    return rows


def tok_s(step, seconds: float) -> float:
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        step()
        n += 1
    return n / (time.perf_counter() - t0)


def gpu_overhead(window_s: float, rounds: int, weights_gb: float, hz: float) -> dict | None:
    try:
        import torch

        if not torch.cuda.is_available():
            return None
    except ImportError:
        return None
    from decode_loop import build

    step, info = build(weights_gb)
    tok_s(step, 2.0)  # warm-up
    results: dict[str, list[float]] = {"none": [], "process": [], "thread": []}
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    for _ in range(rounds):
        results["none"].append(tok_s(step, window_s))
        child = subprocess.Popen([sys.executable, "-c", SAMPLER_PROCESS, str(os.getpid()), str(hz)], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True, env=env)
        child.stdout.readline()  # sampling has started
        results["process"].append(tok_s(step, window_s))
        child.stdin.write("\n")
        child.stdin.flush()
        child.wait(timeout=30)
        sampler = Sampler([0], pids=[os.getpid()], hz=hz).start()
        results["thread"].append(tok_s(step, window_s))
        sampler.stop()
    base = statistics.median(results["none"])
    spread = (max(results["none"]) - min(results["none"])) / base * 100
    return {"device": torch.cuda.get_device_name(0), "weights_gb": round(info["gpu_weight_bytes"] / 1e9, 2), "hz": hz,
            "window_s": window_s, "rounds": rounds, "tok_s": {k: [round(v, 1) for v in vs] for k, vs in results.items()},
            "median_tok_s": {k: round(statistics.median(vs), 1) for k, vs in results.items()},
            "overhead_pct": {k: round((1 - statistics.median(results[k]) / base) * 100, 2) for k in ("process", "thread")},
            "no_sampler_spread_pct": round(spread, 2)}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cpu-seconds", type=float, default=5.0, help="window per rate for the CPU cost (default 5)")
    p.add_argument("--window", type=float, default=3.0, help="seconds per decode window (default 3)")
    p.add_argument("--rounds", type=int, default=3, help="rounds of none/process/thread windows (default 3)")
    p.add_argument("--weights-gb", type=float, default=4.0, help="decode loop weights on the GPU (default 4)")
    p.add_argument("--hz", type=float, default=10.0, help="sampling rate during the decode windows (default 10, the maximum)")
    p.add_argument("--out", help="also write the results as JSON here")
    p.add_argument("--isolation-seconds", type=float, default=10.0, help="window per run for part 0 (default 10)")
    p.add_argument("--isolation-rounds", type=int, default=3, help="child/in-process windows per rate (default 3)")
    p.add_argument("--isolation", action="store_true", help="also run part 0 (4 windows x rounds x seconds)")
    p.add_argument("--isolation-only", action="store_true", help="run part 0 only")
    args = p.parse_args()
    iso = isolation_cost(args.isolation_seconds, args.isolation_rounds) if args.isolation or args.isolation_only else []
    if iso:
        print("NVML in the sampler's child vs in this process (getrusage CPU: this process + the reaped child)")
        print(f"{'Hz':>5} {'NVML':>10} {'window s':>9} {'ticks':>6} {'parent ms/tick':>15} {'child ms/tick':>14} "
              f"{'child start ms':>15} {'total ms/s':>11}")
        for r in iso:
            print(f"{r['hz']:>5g} {r['nvml']:>10} {r['seconds']:>9.1f} {r['ticks']:>6} {r['parent_cpu_ms_per_tick']:>15.3f} "
                  f"{r['child_cpu_ms_per_tick']:>14.3f} {r['child_start_cpu_ms']:>15.1f} {r['total_cpu_ms_per_s']:>11.2f}")
    if args.isolation_only:
        if args.out:
            Path(args.out).write_text(json.dumps({"isolation": iso}, indent=2) + "\n")
        return 0
    cpu = cpu_cost(args.cpu_seconds)
    print("sampler CPU cost (its thread's CPU time, plus its NVML child's answers, while sampling this process and GPU 0)")
    print(f"{'Hz':>5} {'window s':>9} {'ticks':>6} {'CPU ms/s':>9} {'CPU ms/tick':>12}  GPUs  NVML")
    for r in cpu:
        print(f"{r['hz']:>5g} {r['seconds']:>9.1f} {r['ticks']:>6} {r['cpu_ms_per_s']:>9.2f} {r['cpu_ms_per_tick']:>12.3f}"
              f"  {r['gpus_sampled']:>4}  {r['nvml']}")
    gpu = gpu_overhead(args.window, args.rounds, args.weights_gb, args.hz)
    if gpu is None:
        print("\nGPU overhead: skipped (no torch with CUDA here)")
    else:
        print(f"\nGPU decode-loop overhead on {gpu['device']} ({gpu['weights_gb']} GB read per token, sampler at "
              f"{gpu['hz']:g} Hz, {gpu['rounds']} x {gpu['window_s']:g} s windows per mode)")
        print(f"{'sampler':>8} {'median tok/s':>13} {'overhead':>9}  windows")
        for mode in ("none", "process", "thread"):
            over = "" if mode == "none" else f"{gpu['overhead_pct'][mode]:+.2f}%"
            print(f"{mode:>8} {gpu['median_tok_s'][mode]:>13.1f} {over:>9}  {gpu['tok_s'][mode]}")
        print(f"no-sampler spread between windows: {gpu['no_sampler_spread_pct']:.2f}% (smaller overheads are noise)")
    if args.out:
        Path(args.out).write_text(json.dumps({"isolation": iso, "cpu": cpu, "gpu": gpu}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
