"""Check a probe report's decode timing against two independent timings, and print a table.

1. The same generation, another clock: the runner (parent process) stamps each protocol event
   on arrival; the decode phase's window on the parent's clock, divided into the tokens of its
   runs, is an independent timing of exactly the generation the worker timed itself.
2. The same model and settings, another process and other code: benchmarks/probe_vs_independent.py
   (its JSON, when given) times a fresh load with CUDA events.
The first must agree within 3% (it checks the probe's own timing); the second also shows how much
a host-bound decode varies from one process to the next.

usage: python benchmarks/probe_timing_check.py REPORT.json [--independent INDEPENDENT.json ...]
"""

from __future__ import annotations

import argparse
import json
import sys

BAR_PCT = 3.0


def parent_clock(report: dict) -> list[tuple[int, float, float]]:
    """(pass, worker tok/s, parent-clock tok/s) for each decode window of the report."""
    probe = report["probe"]
    res = probe["result"]
    out = []
    for w in probe.get("windows", []):
        if w["phase"] != "decode":
            continue
        runs = res["passes"][w["pass_index"] - 1]["runs"]
        tokens = sum(r["tokens"] for r in runs)
        out.append((w["pass_index"], tokens / sum(r["seconds"] for r in runs), tokens / (w["end_s"] - w["start_s"])))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("reports", nargs="+")
    ap.add_argument("--independent", nargs="*", default=[], help="probe_vs_independent.py outputs, in the same order")
    args = ap.parse_args()
    worst = 0.0
    print(f"{'report':<44}{'pass':>5}{'worker tok/s':>14}{'parent clock':>14}{'diff':>8}")
    for path in args.reports:
        report = json.load(open(path))
        if report.get("probe", {}).get("status") != "ok":
            print(f"{path:<44} probe did not finish")
            continue
        for index, worker, parent in parent_clock(report):
            diff = 100 * (worker - parent) / parent
            worst = max(worst, abs(diff))
            print(f"{path[-44:]:<44}{index:>5}{worker:>14.2f}{parent:>14.2f}{diff:>+7.2f}%")
    if args.independent:
        print(f"\n{'independent run (another process)':<44}{'probe':>10}{'events':>10}{'diff':>8}")
        for path in args.independent:
            ind = json.load(open(path))
            print(f"{path[-44:]:<44}{ind['probe_tok_s']:>10.2f}{ind['independent'][ind['reported_pass'] - 1]['median_tok_s_events']:>10.2f}"
                  f"{ind['diff_pct_events']:>+7.2f}%")
    print(f"\nsame generation, parent clock vs worker: worst {worst:.2f}% (bar {BAR_PCT:g}%)")
    return 0 if worst <= BAR_PCT else 1


if __name__ == "__main__":
    sys.exit(main())
