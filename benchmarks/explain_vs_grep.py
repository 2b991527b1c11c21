"""`v100-doctor explain` against `grep -c -F -f KEYWORDS` over the same page-cached log, in the same run.

KEYWORDS are the literal anchors the scanner searches for (signature anchors, the error/warning
words, plan-hint anchors). grep's output goes to a pipe: with /dev/null GNU grep stops at the first
match. For each error density a log of --size-mb is written to /tmp, read once to be page-cached,
then each program runs --runs times; medians, the ratio, MB/s and the doctor's peak RSS are printed. Wall
time is the measure; CPU time (user + sys, from GNU time) is recorded beside it, because on a shared
machine other processes stretch wall time, for both programs but not equally.

    python benchmarks/explain_vs_grep.py [--size-mb 200] [--runs 3] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from explain_throughput import ORDINARY, RARE  # noqa: E402

# one error-looking line every N lines ("quiet" as in explain_throughput; "crash" like real crash output)
DENSITIES = {"quiet (1 in 50,000)": 50_000, "crash-like (1 in 10)": 10, "dense (every line, distinct)": 1}


def generate(path: Path, size: int, every: int) -> None:
    with open(path, "wb") as fh:
        written, i = 0, 0
        buf = []
        while written < size:
            if i % every == every - 1:
                line = RARE[i % len(RARE)] if every > 1 else (
                    b"RuntimeError: step %d failed at token %d: tensor size mismatch %d != %d\n" % (i, i * 7, i % 977, i % 991))
            else:
                line = ORDINARY[i % len(ORDINARY)]
            buf.append(line)
            written += len(line)
            i += 1
            if len(buf) >= 65536:
                fh.write(b"".join(buf))
                buf = []
        fh.write(b"".join(buf))


def keywords_file() -> Path:
    from doctor.logscan.scanner import Scanner

    path = Path(tempfile.mkstemp(prefix="v100-keywords-", suffix=".txt")[1])
    path.write_bytes(b"\n".join(Scanner().finder.keywords) + b"\n")
    return path


def timed(cmd: str) -> tuple[float, int, str, float]:
    """Wall seconds, peak RSS in KiB, stdout and CPU seconds (user + sys, GNU time) of a shell command."""
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", "sh", "-c", cmd], capture_output=True, text=True)
    dt = time.perf_counter() - t0
    fields = p.stderr.strip().splitlines()[-1].split()
    rss, cpu = (int(fields[0]), float(fields[1]) + float(fields[2])) if len(fields) == 3 else (0, 0.0)
    return dt, rss, p.stdout, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=float, default=200)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json")
    a = ap.parse_args()
    kw = keywords_file()
    rows = []
    print(f"{'density':<30} {'grep s':>7} {'doctor s':>9} {'ratio':>6} {'MB/s':>7} {'peak MiB':>9} {'cpu ratio':>9}  "
          "grep count / doctor lines")
    for name, every in DENSITIES.items():
        log = Path(tempfile.mkstemp(prefix="v100-log-", suffix=".log", dir="/tmp")[1])
        generate(log, int(a.size_mb * 1e6), every)
        subprocess.run(["cat", str(log)], stdout=subprocess.DEVNULL)  # page-cache it
        grep_cmd = f"grep -c -F -f {kw} {log} | cat"
        doc_cmd = f"{sys.executable} -m doctor explain {log} --json --no-live"
        g, d, gc, dc, rss, out, count = [], [], [], [], 0, "", ""
        for _ in range(a.runs):
            dt, _, count, cpu = timed(grep_cmd)
            g.append(dt)
            gc.append(cpu)
            dt, r, out, cpu = timed(doc_cmd)
            d.append(dt)
            dc.append(cpu)
            rss = max(rss, r)
        size = log.stat().st_size
        try:
            stats = json.loads(out)["log"]
            examined = stats.get("matched_lines", 0)
        except (ValueError, KeyError):
            examined = "?"
        row = {"density": name, "bytes": size, "grep_s": statistics.median(g), "doctor_s": statistics.median(d),
               "grep_runs": g, "doctor_runs": d, "doctor_peak_mib": round(rss / 1024, 1), "grep_count": count.strip(),
               "doctor_matched_lines": examined}
        row["ratio"] = round(row["doctor_s"] / row["grep_s"], 2)
        row.update(grep_cpu_s=statistics.median(gc), doctor_cpu_s=statistics.median(dc))
        row["cpu_ratio"] = round(row["doctor_cpu_s"] / row["grep_cpu_s"], 2) if row["grep_cpu_s"] else None
        row["doctor_mb_s"] = round(size / 1e6 / row["doctor_s"], 1)
        rows.append(row)
        print(f"{name:<30} {row['grep_s']:>7.2f} {row['doctor_s']:>9.2f} {row['ratio']:>6.1f} {row['doctor_mb_s']:>7.1f} "
              f"{row['doctor_peak_mib']:>9.1f} {row['cpu_ratio'] or 0:>9.1f}  {row['grep_count']} / {examined}")
        log.unlink()
    kw.unlink()
    print("\ntargets (issue 17): ratio <= 3 at any density, >= 500 MB/s quiet, peak < 100 MiB")
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
