"""Start-up of `v100-doctor --json --no-probe` against `python -m torch.utils.collect_env` (and env-doctor).

Run on purpose, on a machine with torch installed:  python benchmarks/startup.py [--runs 7] [--json OUT]
cold     = no per-wheel torch cache (a fresh XDG_CACHE_HOME each run); the static torch facts are read from the
           wheel's files (doctor/facts/python/torch_static.py), so torch is not imported either way
repeated = the same with the cache directory kept
Prints a table of medians and the ratios the issue asks for.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time

from timing_table import parse_args, print_table, save_json


def timed(cmd: list[str], env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    return time.perf_counter() - start


def series(cmd: list[str], runs: int, fresh_cache: bool, warm_cache_dir: str) -> list[float]:
    out = []
    for _ in range(runs):
        env = dict(os.environ)
        if fresh_cache:
            env["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="v100-bench-")
        else:
            env["XDG_CACHE_HOME"] = warm_cache_dir
        out.append(timed(cmd, env))
        if fresh_cache:
            shutil.rmtree(env["XDG_CACHE_HOME"], ignore_errors=True)
    return out


def main() -> None:
    args = parse_args(__doc__)
    py = sys.executable
    doctor = [py, "-m", "doctor", "--json", "--no-probe", "--no-tui"]
    warm = tempfile.mkdtemp(prefix="v100-bench-warm-")
    subprocess.run(doctor, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "XDG_CACHE_HOME": warm})
    rows = {
        "python -c pass": series([py, "-c", "pass"], args.runs, False, warm),
        "import torch": series([py, "-c", "import torch"], args.runs, False, warm),
        "v100-doctor cold": series(doctor, args.runs, True, warm),
        "v100-doctor repeated": series(doctor, args.runs, False, warm),
        "collect_env": series([py, "-m", "torch.utils.collect_env"], args.runs, False, warm),
    }
    env_doctor = shutil.which("env-doctor")
    if env_doctor:
        rows["env-doctor check --json"] = series([env_doctor, "check", "--json"], args.runs, False, warm)
    med = print_table(rows, f"{'command':<26} {'median s':>9} {'min s':>7} {'max s':>7}   (n={args.runs})")
    fastest_other = min(med["collect_env"], med.get("env-doctor check --json", float("inf")))
    print(f"\ncold / fastest of (collect_env, env-doctor) = {med['v100-doctor cold'] / fastest_other:.2f} "
          f"(issue 17 target <= 0.33; cold <= 0.6 s: {med['v100-doctor cold']:.2f} s)")
    print(f"repeated / collect_env = {med['v100-doctor repeated'] / med['collect_env']:.2f} (target <= 0.33)")
    save_json(args.json, rows)

if __name__ == "__main__":
    main()
