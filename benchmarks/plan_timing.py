"""How long `v100-doctor plan` takes (issue 28: "under 2 s for the table once the Hub answers").

Runs the CLI as a user would against a Hub on 127.0.0.1 serving the story's model and its versions
(fixtures/plans/story-qwen-27b-hub.json), for one card and for three cards (each alone and split), and times the
table alone (build_plan) in-process. Prints one line per case; the median of 3 runs.

    python3 benchmarks/plan_timing.py > benchmarks/results/plan-timing-cpu.txt
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from plan_hub_support import plan_hub  # noqa: E402

STORY = json.loads((ROOT / "fixtures/plans/story-qwen-27b-hub.json").read_text())


def cli(args: list[str], env: dict) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "doctor", "plan", *args], capture_output=True, text=True,
                          env={**os.environ, **env}, cwd=ROOT, timeout=120)
    return time.perf_counter() - start, done


def main() -> None:
    print(f"host: {os.cpu_count()} CPUs, python {sys.version.split()[0]}; median of 3 runs")
    with tempfile.TemporaryDirectory() as tmp, plan_hub(STORY) as (url, asked):
        env = {"HF_ENDPOINT": url, "HF_HUB_CACHE": tmp, "HF_HUB_OFFLINE": "0", "COLUMNS": "160"}
        for name, args in (("hub, 1 card", ["story/Qwen-27B-Instruct", "--no-tui"]),
                           ("hub, 3 cards + split", ["story/Qwen-27B-Instruct", "--no-tui", "--target-gpu", "v100-pcie-16gb",
                                                     "--target-gpu", "p40", "--target-gpu", "t4"])):
            times, rows = [], 0
            for _ in range(3):
                asked.clear()
                took, done = cli(args, env)
                assert done.returncode in (0, 1), done.stderr
                times.append(took)
                rows = sum(1 for line in done.stdout.splitlines() if line.startswith("  ") and (" yes " in line or " NO " in line))
            print(f"CLI {name}: {statistics.median(times):.2f} s wall (process start, imports, {len(asked)} Hub requests, "
                  f"plan, text), {rows} table rows")
    from doctor.facts.modeldir.config import parse_config
    from doctor.knowledge.gpus import spec_for_key
    from doctor.plan.build import build_plan, standard_candidates

    config = parse_config(json.loads((ROOT / "fixtures/models/qwen2-27b-exl2-3.75bpw/config.json").read_text()))
    cards = tuple(spec_for_key(k) for k in ("v100-pcie-16gb", "p40", "t4"))
    times = []
    for _ in range(3):
        start = time.perf_counter()
        plan = build_plan("x", "y", config, standard_candidates(), cards, 8192, min_tok_s=30)
        times.append(time.perf_counter() - start)
    print(f"table alone (build_plan, 14 versions x caches, 3 cards + split, --min-tok-s): {statistics.median(times):.3f} s, "
          f"{len(plan.rows)} rows")


if __name__ == "__main__":
    main()
