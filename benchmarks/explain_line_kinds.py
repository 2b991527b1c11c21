"""Where `explain`'s time goes per kind of line: one log per kind, each scanned in-process by today's scanner and by
the scanner of --before REV, beside `grep -c -F -f KEYWORDS` on the same file, CPU seconds, in one run.

Why: a log made of real pastes mixes tracebacks, prefixed lines, wrapped lines and distinct and repeated lines
(issue 29); each costs the scanner differently. Every log is --size-mb, written to /tmp and removed afterwards,
built from the project's real pastes (fixtures/logs/**/*.log):
  tracebacks   every Python traceback of the pastes (header to exception line), again and again
  prefixed     the pastes' lines with a log prefix (timestamp, level, container or process tag, journald)
  wrapped      the pastes' wrapped messages (a line and the continuation lines under it)
  repeated     the pastes whole, again and again (every line seen before after the first copy)
  shifted      the pastes, each copy with every number + its index (the same lines with other numbers)
  distinct     error lines distinct in their words, never seen twice
Each scanner runs in its own process (python -c, the scan alone timed with time.process_time; --runs, the fastest).

    python benchmarks/explain_line_kinds.py [--size-mb 40] [--runs 3] [--before REV] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from explain_real_pastes import before_tree, pastes  # noqa: E402
from explain_vs_grep import keywords_file, timed  # noqa: E402

from doctor.logscan.lines import PREFIX, continuation, split_prefix, starts_a_traceback  # noqa: E402

_DIGITS = re.compile(rb"\d+")
SCAN = r'''
import sys, time
sys.path.insert(0, sys.argv[1])
from doctor.logscan.scanner import Scanner
from doctor.commands.log_input import open_log
scanner, source = Scanner(), open_log(sys.argv[2])
started = time.process_time()
result = scanner.scan(source)
print(time.process_time() - started, result.stats.matched_lines, result.unexplained.error_lines)
'''


def kinds(files: list[Path]) -> dict[str, bytes]:
    """One piece of text per kind, from the pastes (repeated to size by `write`)."""
    lines = [line for f in files for line in f.read_bytes().rstrip(b"\n").split(b"\n")]
    texts = [line.decode("utf-8", "replace") for line in lines]
    tracebacks, prefixed, wrapped = [], [], []
    i = 0
    while i < len(lines):
        if starts_a_traceback(texts[i]):
            end = i + 1  # the frames and their source lines (indented after any prefix), then the exception line
            while end < len(lines) and split_prefix(texts[end])[1][:1].isspace():
                end += 1
            tracebacks += lines[i:min(end + 1, len(lines))]
            i = end + 1
            continue
        if i + 1 < len(lines) and continuation(texts[i + 1]) is not None:
            end = i + 1
            while end < len(lines) and continuation(texts[end]) is not None:
                end += 1
            wrapped += lines[i:end]
            i = end
            continue
        if PREFIX.match(texts[i]):
            prefixed.append(lines[i])
        i += 1
    corpus = b"\n".join(lines) + b"\n"
    return {"tracebacks": b"\n".join(tracebacks) + b"\n", "prefixed": b"\n".join(prefixed) + b"\n",
            "wrapped": b"\n".join(wrapped) + b"\n", "repeated": corpus, "shifted": corpus, "distinct": b""}


def distinct_lines(start: int, count: int) -> bytes:
    """Error lines that differ in their words (letters), so that no two blank to the same key."""
    return b"".join(b"RuntimeError: step failed in %s while loading %s\n"
                    % (bytes(97 + (n // 26 ** k) % 26 for k in range(5)), bytes(97 + (n // 26 ** k) % 26 for k in range(5, 8)))
                    for n in range(start, start + count))


def write(path: Path, kind: str, piece: bytes, size: int) -> None:
    with open(path, "wb") as fh:
        written, copy = 0, 0
        while written < size:
            out = piece
            if kind == "distinct":
                out = distinct_lines(copy * 10_000, 10_000)
            elif kind == "shifted":
                out = _DIGITS.sub(lambda m, c=copy: str(int(m.group(0)) + c).encode(), piece)
            fh.write(out)
            written += len(out)
            copy += 1


def scan_cpu(tree: Path, log: Path, runs: int) -> tuple[float, str]:
    best, found = float("inf"), ""
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", SCAN, str(tree), str(log)], capture_output=True, text=True,
                             cwd=tree, check=True).stdout.split()
        best, found = min(best, float(out[0])), f"{out[1]} matched, {out[2]} err"
    return best, found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=float, default=40)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--before", metavar="REV")
    ap.add_argument("--json")
    a = ap.parse_args()
    load = os.getloadavg()
    print(f"{os.cpu_count()} CPUs, load {load[0]:.1f} {load[1]:.1f}, Python {sys.version.split()[0]}; "
          f"scan CPU s in-process (fastest of {a.runs}); grep CPU s (user + sys, median)")
    kw = keywords_file()
    before = before_tree(a.before) if a.before else None
    print(f"{'kind':<11} {'MB':>5} {'grep':>6} {'doctor':>7} {'x grep':>7} {'MB/s':>6}" +
          (f" {'before':>7} {'x grep':>7}" if before else "") + "  doctor found")
    rows = []
    try:
        for kind, piece in kinds(pastes([])).items():
            log = Path(tempfile.mkstemp(prefix=f"v100-{kind}-", suffix=".log", dir="/tmp")[1])
            try:
                write(log, kind, piece, int(a.size_mb * 1e6))
                subprocess.run(["cat", str(log)], stdout=subprocess.DEVNULL)  # page-cache it
                grep = sorted(timed(f"grep -c -F -f {kw} {log} | cat")[3] for _ in range(a.runs))[a.runs // 2]
                cpu, found = scan_cpu(ROOT, log, a.runs)
                row = {"kind": kind, "bytes": log.stat().st_size, "grep_cpu_s": grep, "doctor_cpu_s": round(cpu, 3),
                       "x_grep": round(cpu / grep, 2) if grep else None, "found": found}
                size = row["bytes"] / 1e6
                line = (f"{kind:<11} {size:>5.0f} {grep:>6.2f} {cpu:>7.2f} {row['x_grep'] or 0:>7.1f} "
                        f"{size / cpu:>6.0f}")
                if before is not None:
                    old, old_found = scan_cpu(before, log, a.runs)
                    row.update(before_cpu_s=round(old, 3), before_x_grep=round(old / grep, 2) if grep else None,
                               before_found=old_found)
                    line += f" {old:>7.2f} {row['before_x_grep'] or 0:>7.1f}"
                print(f"{line}  {found}" + ("" if before is None or old_found == found else f" (before: {old_found})"),
                      flush=True)
                rows.append(row)
            finally:
                log.unlink()
    finally:
        kw.unlink()
        if before is not None:
            shutil.rmtree(before)
    if a.json:
        Path(a.json).write_text(json.dumps({"load": load, "load_after": os.getloadavg(), "before": a.before,
                                            "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
