"""Shared by the start-up benchmarks: the table of medians and the raw timings as JSON."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys


def medians(rows: dict[str, list[float]]) -> dict[str, float]:
    return {k: statistics.median(v) for k, v in rows.items()}


def print_table(rows: dict[str, list[float]], header: str) -> dict[str, float]:
    med = medians(rows)
    print(header)
    for k, v in rows.items():
        print(f"{k:<26} {med[k]:>9.3f} {min(v):>7.3f} {max(v):>7.3f}")
    return med


def save_json(path: str | None, rows: dict[str, list[float]]) -> None:
    if path:
        with open(path, "w") as fh:
            json.dump({"runs": rows, "median": medians(rows), "python": sys.version, "cpus": os.cpu_count()}, fh, indent=2)


def parse_args(doc: str) -> argparse.Namespace:
    """--runs and --json, the two options every start-up benchmark takes."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--json", metavar="OUT", help="also write the raw timings as JSON")
    return ap.parse_args()
