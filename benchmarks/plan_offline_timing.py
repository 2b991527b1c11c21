"""How long `v100-doctor plan ORG/NAME` takes without the Hub (issue 37: "answers from the catalogue in under 0.5 s, and
a name in neither catalogue nor cache fails in under 2 s with exit 3").

Runs the CLI as a user would, each case N times interleaved with a reference in the same run (the bare interpreter,
`python3 -c pass`, and `python3 -m doctor --version`), and prints the median wall time and the median CPU time (user +
sys of the child) per case: on a loaded machine the wall time carries the other processes' share, the CPU time does
not. Cases: a catalogued model offline; a name in neither catalogue nor cache, offline (exit 3); the same name with the
network allowed but the Hub unreachable (a refused port, and an address that never answers: the 1.5 s timeout).

    python3 benchmarks/plan_offline_timing.py > benchmarks/results/plan-offline-timing.txt
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = 7


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """(wall s, CPU s of the child, exit code)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, env={**os.environ, **env}, cwd=ROOT, timeout=120)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.returncode


def main() -> None:
    load = os.getloadavg()
    print(f"host: {os.cpu_count()} CPUs, load average {load[0]:.1f}, python {sys.version.split()[0]}; median of {RUNS} "
          "runs, cases interleaved")
    py = [sys.executable]
    with tempfile.TemporaryDirectory() as cache:
        offline = {"HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": cache, "PYTHONPATH": str(ROOT)}
        online = {"HF_HUB_OFFLINE": "0", "HF_HUB_CACHE": cache, "PYTHONPATH": str(ROOT)}
        cases = [
            ("reference: python3 -c pass", py + ["-c", "pass"], offline),
            ("reference: v100-doctor --version", py + ["-m", "doctor", "--version"], offline),
            ("plan Qwen/Qwen2.5-32B-Instruct, HF_HUB_OFFLINE=1 (catalogue)",
             py + ["-m", "doctor", "plan", "Qwen/Qwen2.5-32B-Instruct", "--no-tui"], offline),
            ("plan no-such-org/no-such-model, HF_HUB_OFFLINE=1 (exit 3)",
             py + ["-m", "doctor", "plan", "no-such-org/no-such-model", "--no-tui"], offline),
            ("plan no-such-org/no-such-model, Hub port refused (exit 3)",
             py + ["-m", "doctor", "plan", "no-such-org/no-such-model", "--no-tui"],
             {**online, "HF_ENDPOINT": "http://127.0.0.1:9"}),
            ("plan no-such-org/no-such-model, Hub never answers (exit 3)",
             py + ["-m", "doctor", "plan", "no-such-org/no-such-model", "--no-tui"],
             {**online, "HF_ENDPOINT": "http://10.255.255.1"}),
        ]
        results: dict[str, list[tuple[float, float, int]]] = {name: [] for name, _, _ in cases}
        for _ in range(RUNS):
            for name, cmd, env in cases:
                results[name].append(timed(cmd, env))
    for name, runs in results.items():
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        codes = sorted({r[2] for r in runs})
        print(f"{name}: {wall:.2f} s wall, {cpu:.2f} s CPU, exit {','.join(map(str, codes))}")


if __name__ == "__main__":
    main()
