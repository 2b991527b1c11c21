"""`explain` on logs made of real error pastes, beside `grep -c -F -f KEYWORDS` on the same file, in one run.

Why: the generated logs of explain_vs_grep.py repeat a handful of lines; what users keep on their servers is a mix
of long tracebacks, prefixed and wrapped lines, many distinct error lines and repeated blocks (issue 29).
Three logs are written to /tmp (never committed), page-cached, then each program runs --runs times:
  error-dense   the project's real pastes (fixtures/logs/**/*.log, whose sources each file's header and
                fixtures/logs/README.md cite; plus any --extra DIR of *.log), concatenated over and over
                to --size-mb; every 7th copy has its numbers shifted, so lines repeat with other numbers too
  dense         explain_vs_grep.py's "every line an error, distinct numbers"
  quiet         explain_vs_grep.py's "1 error in 50,000 lines", at --quiet-mb (big, so start-up is a small part)
Printed per log: wall and CPU seconds (user + sys, GNU time) of both, their ratios, the doctor's MB/s and peak RSS.
--before REV runs, in the same loop, this tree with doctor/logscan and doctor/commands/explain.py as they were at REV
(the same knowledge, the scanner of then; a copy in /tmp) and says whether its findings equal today's (the JSON less
its time stamps). --profile prints where the scanner's time goes on the error-dense log, per line kind (in-process).

    python benchmarks/explain_real_pastes.py [--size-mb 200] [--quiet-mb 1000] [--runs 3] [--json OUT] [--profile]
                                             [--before REV]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from explain_vs_grep import generate, keywords_file, timed  # noqa: E402

PASTES = ROOT / "fixtures" / "logs"
_DIGITS = re.compile(rb"\d+")


def pastes(extra: list[str]) -> list[Path]:
    files = sorted(PASTES.rglob("*.log"))
    for d in extra:
        files += sorted(Path(d).glob("*.log"))
    return files


def write_error_dense(path: Path, size: int, files: list[Path]) -> None:
    """The pastes, concatenated until `size` bytes; every 7th copy with each number + the copy's index."""
    corpus = b"".join(f.read_bytes().rstrip(b"\n") + b"\n" for f in files)
    with open(path, "wb") as fh:
        written, copy = 0, 0
        while written < size:
            piece = corpus
            if copy % 7 == 6:
                piece = _DIGITS.sub(lambda m, c=copy: str(int(m.group(0)) + c).encode(), corpus)
            fh.write(piece)
            written += len(piece)
            copy += 1


BEFORE_PATHS = ("doctor/logscan", "doctor/commands/explain.py")


def before_tree(rev: str) -> Path:
    """This tree (HEAD) with BEFORE_PATHS as they were at `rev`, in a temporary folder."""
    tree = Path(tempfile.mkdtemp(prefix="v100-before-", dir="/tmp"))
    subprocess.run(f"git -C {ROOT} archive HEAD | tar -x -C {tree}", shell=True, check=True)
    for path in BEFORE_PATHS:
        target = tree / path
        shutil.rmtree(target) if target.is_dir() else target.unlink()
    subprocess.run(f"git -C {ROOT} archive {rev} {' '.join(BEFORE_PATHS)} | tar -x -C {tree}", shell=True, check=True)
    return tree


def findings(out: str) -> dict | None:
    """The analysis less what differs from run to run (its time stamp, seconds and MB/s)."""
    try:
        doc = json.loads(out)
    except ValueError:
        return None
    doc.pop("created_at", None)
    for key in ("seconds", "mb_per_s"):
        doc.get("log", {}).pop(key, None)
    return doc


def measure(name: str, log: Path, kw: Path, runs: int, before: Path | None = None) -> dict:
    subprocess.run(["cat", str(log)], stdout=subprocess.DEVNULL)  # page-cache it
    grep_cmd = f"grep -c -F -f {kw} {log} | cat"
    doc_cmd = f"{sys.executable} -m doctor explain {log} --json --no-live"
    g, gc, d, dc, bc, rss, out, count, before_out = [], [], [], [], [], 0, "", "", ""
    for _ in range(runs):
        dt, _, count, cpu = timed(grep_cmd)
        g.append(dt)
        gc.append(cpu)
        dt, r, out, cpu = timed(doc_cmd)
        d.append(dt)
        dc.append(cpu)
        rss = max(rss, r)
        if before is not None:
            _, _, before_out, cpu = timed(f"cd {before} && {doc_cmd}")
            bc.append(cpu)
    size = log.stat().st_size
    doc = findings(out)
    try:
        found = f"{doc['log']['matched_lines']} matched, {doc['unexplained']['error_lines']} err" if doc else "?"
    except KeyError:
        found = "?"
    row = {"log": name, "bytes": size, "grep_s": statistics.median(g), "doctor_s": statistics.median(d),
           "grep_cpu_s": statistics.median(gc), "doctor_cpu_s": statistics.median(dc), "grep_runs": g,
           "doctor_runs": d, "grep_cpu_runs": gc, "doctor_cpu_runs": dc, "doctor_peak_mib": round(rss / 1024, 1),
           "grep_count": count.strip(), "doctor": found}
    row["ratio"] = round(row["doctor_s"] / row["grep_s"], 2)
    row["cpu_ratio"] = round(row["doctor_cpu_s"] / row["grep_cpu_s"], 2) if row["grep_cpu_s"] else None
    row["doctor_mb_s"] = round(size / 1e6 / row["doctor_s"], 1)
    row["doctor_cpu_mb_s"] = round(size / 1e6 / row["doctor_cpu_s"], 1) if row["doctor_cpu_s"] else None
    print(f"{name:<13} {size / 1e6:>6.0f} {row['grep_s']:>7.2f} {row['doctor_s']:>9.2f} {row['ratio']:>6.1f} "
          f"{row['grep_cpu_s']:>7.2f} {row['doctor_cpu_s']:>8.2f} {row['cpu_ratio'] or 0:>6.1f} {row['doctor_mb_s']:>7.0f} "
          f"{row['doctor_peak_mib']:>8.1f}  {row['grep_count']} / {found}", flush=True)
    if before is not None:
        row["before_cpu_s"] = statistics.median(bc)
        row["before_cpu_runs"] = bc
        row["before_cpu_ratio"] = round(row["before_cpu_s"] / row["grep_cpu_s"], 2) if row["grep_cpu_s"] else None
        row["findings_identical"] = doc is not None and doc == findings(before_out)
        print(f"{'  before':<13} {'':>6} {'':>7} {'':>9} {'':>6} {'':>7} {row['before_cpu_s']:>8.2f} "
              f"{row['before_cpu_ratio'] or 0:>6.1f}  findings identical: {row['findings_identical']}", flush=True)
    return row


def profile(log: Path) -> None:
    """Where the scanner's CPU time goes on this log, per line kind: blocks read line by line or replayed whole, the
    lines a replay reads one by one by why, and the lines classified (the regexes and rules: the rest is replays)."""
    from doctor.commands.log_input import open_log
    from doctor.logscan import remembered, scanner

    clock = time.process_time
    spent: Counter = Counter()
    counts: Counter = Counter()
    why: Counter = Counter()

    def timed_method(cls, name, label):
        original = getattr(cls, name)

        def wrapper(*args, **kwargs):
            started = clock()
            try:
                return original(*args, **kwargs)
            finally:
                spent[label] += clock() - started
                counts[label] += 1
        setattr(cls, name, wrapper)
        return original

    def reason(run, block, ls, le) -> str:
        seen = run.seen.get(block[ls:le].translate(remembered.BLANK_DIGITS))
        if seen is None:
            return "not seen yet (its blanked form)"
        if seen.kind == remembered.CONTEXT:
            if seen.before:
                return "the line above decides it (traceback source, indented)"
            if seen.after:
                return "the lines below decide it (wrapped message, caption)"
            return "its digits matter, a new variant (versions, sm_NN, Xids, hints)"
        return "plan hint, or its next line changes it"

    original_read = scanner._Run.read_line

    def read_line(run, block, ls, le, lineno):
        why[reason(run, block, ls, le)] += 1
        return original_read(run, block, ls, le, lineno)

    originals = [(scanner._Run, "_classify", timed_method(scanner._Run, "_classify", "classify (regexes, rules)")),
                 (scanner._Run, "_examine", timed_method(scanner._Run, "_examine", "blocks read line by line")),
                 (scanner, "replay_block", scanner.replay_block)]
    replay = scanner.replay_block

    def replay_block(run, block):
        started = clock()
        try:
            return replay(run, block)
        finally:
            spent["blocks replayed whole"] += clock() - started
            counts["blocks replayed whole"] += 1
    scanner.replay_block = replay_block
    scanner._Run.read_line = read_line
    try:
        source = open_log(str(log))
        started = clock()
        result = scanner.Scanner().scan(source)
        total = clock() - started
        source.close()
    finally:
        for owner, name, original in originals:
            setattr(owner, name, original)
        scanner._Run.read_line = original_read
    print(f"\nprofile: {log.stat().st_size / 1e6:.0f} MB, {result.stats.lines:,} lines, {total:.2f} s CPU in-process")
    for label in ("blocks read line by line", "blocks replayed whole", "classify (regexes, rules)"):
        print(f"  {label:<46} {counts[label]:>9,} {spent[label]:>7.2f} s  (classify runs inside both kinds of block)"
              if label.startswith("classify") else f"  {label:<46} {counts[label]:>9,} {spent[label]:>7.2f} s")
    print("  lines a whole-block replay read one by one, by why:")
    for label, n in why.most_common():
        print(f"    {label:<64} {n:>9,}")
    print()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=float, default=200)
    ap.add_argument("--quiet-mb", type=float, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--extra", action="append", default=[], help="another folder of *.log pastes")
    ap.add_argument("--only", choices=("error-dense", "dense", "quiet"), action="append")
    ap.add_argument("--json")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--before", metavar="REV", help="also run the scanner of REV (doctor/logscan, explain.py) beside")
    a = ap.parse_args()
    files = pastes(a.extra)
    load = os.getloadavg()
    print(f"{len(files)} pastes, {sum(f.stat().st_size for f in files):,} bytes; {os.cpu_count()} CPUs, "
          f"load {load[0]:.1f} {load[1]:.1f}, Python {sys.version.split()[0]}")
    kw = keywords_file()
    logs = {"error-dense": lambda p: write_error_dense(p, int(a.size_mb * 1e6), files),
            "dense": lambda p: generate(p, int(a.size_mb * 1e6), 1),
            "quiet": lambda p: generate(p, int(a.quiet_mb * 1e6), 50_000)}
    print(f"{'log':<13} {'MB':>6} {'grep s':>7} {'doctor s':>9} {'ratio':>6} {'grep cpu':>7} {'doc cpu':>8} {'cpu x':>6} "
          f"{'MB/s':>7} {'peak MiB':>8}  grep count / doctor")
    rows = []
    before = before_tree(a.before) if a.before else None
    for name, write in logs.items():
        if a.only and name not in a.only:
            continue
        log = Path(tempfile.mkstemp(prefix=f"v100-{name}-", suffix=".log", dir="/tmp")[1])
        try:
            write(log)
            if a.profile and name == "error-dense":
                profile(log)
            rows.append(measure(name, log, kw, a.runs, before))
        finally:
            log.unlink()
    kw.unlink()
    if before is not None:
        shutil.rmtree(before)
    print("\ntargets (issue 29): ratio <= 3 on error-dense and dense, >= 500 MB/s quiet, peak < 100 MiB (2 GB log: "
          "explain_throughput.py)")
    if a.json:
        Path(a.json).write_text(json.dumps({"files": [str(f.relative_to(ROOT)) if f.is_relative_to(ROOT) else str(f)
                                                      for f in files], "load": load, "load_after": os.getloadavg(),
                                            "before": a.before, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
