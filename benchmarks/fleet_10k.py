"""Can `v100-doctor fleet` aggregate 10,000 reports in under 10 s on a 2-core machine? Measure it.

Makes N reports (default 10,000) from the machine fixtures replayed once each, each copy with its own
hostname and, for a share of them, a probed decode speed around a median with a few slow outliers, in a
temporary folder; then times `collect()` over the folder (reading, parsing, rows, groups, outliers) and
the text rendering, best of --repeat runs. Writes the figures as JSON (--out).

usage: python benchmarks/fleet_10k.py [--reports 10000] [--repeat 3] [--out benchmarks/results/fleet-10k.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from doctor.facts.replay import load_document  # noqa: E402
from doctor.model.report import report_to_dict  # noqa: E402
from doctor.model.source import replayed  # noqa: E402
from doctor.render.fleet import render_fleet_text  # noqa: E402
from doctor.run.fleet import collect  # noqa: E402
from doctor.run.pipeline import diagnose  # noqa: E402

MACHINES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "machines")


def templates() -> list[dict]:
    out = []
    for name in sorted(os.listdir(MACHINES)):
        if name.endswith(".json"):
            loaded = load_document(os.path.join(MACHINES, name))
            out.append(report_to_dict(diagnose(loaded.plan, loaded.facts, source=replayed(name))))
    return out


def write_fleet(folder: str, n: int, seed: int = 15) -> int:
    rng = random.Random(seed)
    base = templates()
    total = 0
    for i in range(n):
        doc = dict(base[i % len(base)])
        doc["facts"] = dict(doc["facts"], host=dict(doc["facts"]["host"], hostname=f"node{i:05d}"))
        doc["plan"] = dict(doc["plan"], model_path="/models/qwen27b-exl2-3.75bpw")
        if i % 3 == 0:  # a third were probed: ~64 tok/s, one in 50 slow
            speed = rng.gauss(64.0, 2.0) * (0.5 if i % 150 == 0 else 1.0)
            doc["verdict"] = {"measured_tok_s": round(speed, 2), "ceiling_tok_s": 70.9}
        text = json.dumps(doc)
        total += len(text)
        with open(os.path.join(folder, f"node{i:05d}.json"), "w") as fh:
            fh.write(text)
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reports", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        size = write_fleet(folder, args.reports)
        runs = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            fleet = collect([folder], jobs=args.jobs)
            t1 = time.perf_counter()
            render_fleet_text(fleet)
            runs.append((t1 - t0, time.perf_counter() - t1))
    best = min(runs)
    result = {"reports": args.reports, "bytes": size, "rows": len(fleet.rows), "groups": len(fleet.groups),
              "outliers": len(fleet.outliers), "collect_s": round(best[0], 3), "render_text_s": round(best[1], 3),
              "runs_s": [round(a + b, 3) for a, b in runs], "cpus": os.cpu_count(),
              "jobs": args.jobs or min(4, os.cpu_count() or 1), "python": platform.python_version(),
              "machine": platform.processor() or platform.machine(), "budget_s": 10.0, "within_budget": best[0] + best[1] < 10.0}
    print(json.dumps(result, indent=2))
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
