"""`explain` on a log with a timestamp on every record, beside `grep -c -F -f KEYWORDS` on the same file, in one run.

Why (issue 40): real pastes carry a timestamp on each line, so no two lines are the same; the scanner remembered a
line's outcome under its digits blanked, except where the digits matter (a version, sm_NN, a layer count), where it
kept the whole line: with a timestamp in it, every such line was new and was classified again.

Logs (written to /tmp, page-cached, removed afterwards):
  timestamped  benchmarks/timestamped_logs.py: the project's pastes (fixtures/logs/**/*.log), each record's first line
               stamped in one of six styles in turn (Ollama's logfmt, journald, vLLM's logger, docker's -t, Python
               logging, a seconds stamp), the clock moving on every line, to --size-mb
  plain        the same pastes without the stamps, as many copies (its findings must equal the timestamped log's,
               the lines' text and the engine aside: tests/doctor/logscan/test_timestamped_logs.py's findings())
  dense        explain_vs_grep.py's "every line an error, distinct numbers", untimestamped, to --size-mb
Bar-style: the programs alternate, --runs times each (default 2), and the best run of each is compared; wall time is
the measure, CPU time (user + sys, GNU time) beside it (on a shared machine other processes stretch wall time).
--before REV also runs the scanner of REV (doctor/logscan of then, in a copy of this tree) in the same loop, with a
findings check.

    python benchmarks/explain_timestamped.py [--size-mb 200] [--runs 2] [--before REV] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import timestamped_logs  # noqa: E402
from explain_real_pastes import findings  # noqa: E402
from explain_vs_grep import generate, keywords_file, timed  # noqa: E402

TARGET_RATIO = 3.0
TARGET_RSS_MIB = 100


def before_tree(rev: str) -> Path:
    """This tree (HEAD) with doctor/logscan as it was at `rev` (the scanner alone: the commands around it have moved
    since, which explain_real_pastes.before_tree's copy of explain.py would not follow), in a temporary folder."""
    tree = Path(tempfile.mkdtemp(prefix="v100-before-", dir="/tmp"))
    subprocess.run(f"git -C {ROOT} archive HEAD | tar -x -C {tree}", shell=True, check=True)
    shutil.rmtree(tree / "doctor" / "logscan")
    subprocess.run(f"git -C {ROOT} archive {rev} doctor/logscan | tar -x -C {tree}", shell=True, check=True)
    return tree


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return f"{line.split(':', 1)[1].strip()}, {os.cpu_count()} CPUs"
    except OSError:
        pass
    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs"


def write_plain(path: Path, copies: int) -> None:
    texts = timestamped_logs.plain_corpus(timestamped_logs.pastes())
    with open(path, "wb") as fh:
        for i in range(copies):
            fh.write(texts[i % len(texts)].encode() + b"\n")


def comparable(doc: dict | None) -> dict | None:
    """The findings less the lines' text, the bytes and the engine with its worded fixes (a logger's format is
    evidence of its engine)."""
    if doc is None:
        return None
    log = {k: v for k, v in doc.get("log", {}).items() if k not in ("bytes", "name")}
    matches = sorted((m["signature"], m["first_line"], m["count"], m.get("lines"), m.get("numbers"))
                     for m in doc.get("matches", []))
    un = doc.get("unexplained", {})
    groups = [(g.get("kind"), g.get("first_line"), g.get("count"), g.get("lines")) for g in un.get("groups", [])]
    return dict(log=log, matches=matches, groups=groups, hints=doc.get("plan_hints"),
                counts=(un.get("error_lines"), un.get("warning_lines")))


def measure(name: str, log: Path, kw: Path, runs: int, before: Path | None) -> dict:
    subprocess.run(["cat", str(log)], stdout=subprocess.DEVNULL)  # page-cache it
    grep_cmd = f"grep -c -F -f {kw} {log} | cat"
    doc_cmd = f"{sys.executable} -m doctor explain {log} --json --no-live"
    g, gc, d, dc, b, bc, rss, out, count, before_out = [], [], [], [], [], [], 0, "", "", ""
    for _ in range(runs):
        dt, _, count, cpu = timed(grep_cmd)
        g.append(dt)
        gc.append(cpu)
        dt, r, out, cpu = timed(f"cd {ROOT} && {doc_cmd}")
        d.append(dt)
        dc.append(cpu)
        rss = max(rss, r)
        if before is not None:
            dt, _, before_out, cpu = timed(f"cd {before} && {doc_cmd}")
            b.append(dt)
            bc.append(cpu)
    doc = findings(out)
    row = {"log": name, "bytes": log.stat().st_size, "lines": None, "grep_runs": g, "doctor_runs": d,
           "grep_cpu_runs": gc, "doctor_cpu_runs": dc, "grep_s": min(g), "doctor_s": min(d), "grep_cpu_s": min(gc),
           "doctor_cpu_s": min(dc), "doctor_peak_mib": round(rss / 1024, 1), "grep_count": count.strip()}
    row["ratio"] = round(row["doctor_s"] / row["grep_s"], 2)
    row["cpu_ratio"] = round(row["doctor_cpu_s"] / row["grep_cpu_s"], 2) if row["grep_cpu_s"] else None
    if doc:
        row["lines"] = doc["log"].get("lines")
        row["doctor"] = f"{doc['log'].get('matched_lines')} matched, {doc['unexplained'].get('error_lines')} err"
    row["findings"] = comparable(doc)
    print(f"{name:<12} {row['bytes'] / 1e6:>6.0f} {row['grep_s']:>7.2f} {row['doctor_s']:>9.2f} {row['ratio']:>6.2f} "
          f"{row['grep_cpu_s']:>7.2f} {row['doctor_cpu_s']:>8.2f} {row['cpu_ratio'] or 0:>6.2f} "
          f"{row['doctor_peak_mib']:>8.1f}  {row['grep_count']} / {row.get('doctor', '?')}", flush=True)
    if before is not None:
        row.update(before_runs=b, before_cpu_runs=bc, before_s=min(b), before_cpu_s=min(bc),
                   before_ratio=round(min(b) / row["grep_s"], 2), findings_identical_to_before=doc == findings(before_out))
        print(f"{'  before':<12} {'':>6} {'':>7} {row['before_s']:>9.2f} {row['before_ratio']:>6.2f} {'':>7} "
              f"{row['before_cpu_s']:>8.2f} {row['before_cpu_s'] / row['grep_cpu_s']:>6.2f}  findings identical: "
              f"{row['findings_identical_to_before']}", flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=float, default=200)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--before", help="also run the scanner of this commit, in the same loop")
    ap.add_argument("--json")
    a = ap.parse_args()
    size = int(a.size_mb * 1e6)
    kw = keywords_file()
    before = before_tree(a.before) if a.before else None
    tmp = Path(tempfile.mkdtemp(prefix="v100-timestamped-", dir="/tmp"))
    rows = []
    print(f"CPU: {cpu_name()}; load average at start {os.getloadavg()[0]:.1f}; best of {a.runs} runs each")
    print(f"{'log':<12} {'MB':>6} {'grep s':>7} {'doctor s':>9} {'ratio':>6} {'grep cpu':>7} {'doc cpu':>8} {'cpu x':>6} "
          f"{'peak MiB':>8}  grep count / doctor")
    try:
        stamped = tmp / "timestamped.log"
        lines, _ = timestamped_logs.write(stamped, size)
        files = timestamped_logs.pastes()
        copies = sum(1 for _ in timestamped_logs.copies(files, size))
        rows.append(measure("timestamped", stamped, kw, a.runs, before))
        stamped.unlink()
        plain = tmp / "plain.log"
        write_plain(plain, copies)
        rows.append(measure("plain", plain, kw, 1, None))
        plain.unlink()
        dense = tmp / "dense.log"
        generate(dense, size, 1)
        rows.append(measure("dense", dense, kw, a.runs, before))
        dense.unlink()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        kw.unlink()
        if before is not None:
            shutil.rmtree(before, ignore_errors=True)
    same = rows[0]["findings"] is not None and rows[0]["findings"] == rows[1]["findings"]
    print(f"\ntimestamped log: {lines} lines; its findings equal the plain pastes': {same}")
    for row in (rows[0], rows[2]):
        ok = row["ratio"] <= TARGET_RATIO and row["doctor_peak_mib"] < TARGET_RSS_MIB
        print(f"target (issue 40) for {row['log']}: ratio <= {TARGET_RATIO:g} (best of {a.runs}) and peak < "
              f"{TARGET_RSS_MIB} MiB: {'met' if ok else 'NOT met'} ({row['ratio']:.2f}x, {row['doctor_peak_mib']} MiB)")
    if a.json:
        for row in rows:
            row.pop("findings", None)
        Path(a.json).write_text(json.dumps({"cpu": cpu_name(), "findings_equal_plain": same, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
