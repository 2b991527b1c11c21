"""How fast `v100-doctor explain` streams a big log, and how much memory it holds while doing it.

Writes a generated log (default 2 GB) to a temporary file: TabbyAPI-style INFO and metrics lines,
progress bars and traceback frames, with a real error signature or an unexplained error every
~50,000 lines. Then it measures, each as its own table row:
  - the CLI end to end (`python -m doctor explain FILE --no-live --json`), with the child's peak RSS;
  - the scanner in-process with the ahocorasick-rs prefilter;
  - the scanner with the stdlib bytes.find fallback, on the first --fallback-mb of the log.
Nothing is committed: the file is deleted afterwards (unless --keep).

    python benchmarks/explain_throughput.py [--size-gb 2] [--fallback-mb 256] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ORDINARY = [
    b'INFO:     127.0.0.1:51234 - "POST /v1/chat/completions HTTP/1.1" 200 OK\n',
    b"INFO:     Metrics: 512 tokens generated in 12.3 seconds (Queue: 0.0 s, Process: 0 cached tokens and 1024 new "
    b"tokens at 900.1 T/s, Generate: 41.6 T/s, Context: 1024 tokens)\n",
    "Loading model modules ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ 100% 67/67 0:00:00\n".encode(),
    b'  File "/opt/venv/lib/python3.10/site-packages/exllamav2/model.py", line 629, in load_autosplit_gen\n',
    b"DEBUG    tokenizer: added 3 special tokens, vocab size 151936\n",
]
RARE = [
    b"RuntimeError: CUDA error: no kernel image is available for execution on the device\n",
    b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has a total capacity of 15.77 GiB "
    b"of which 52.19 MiB is free.\n",
    b"WARNING:  An unsupported GPU is found in this configuration. Switching to compatibility mode.\n",
    b"ERROR:    Exception in ASGI application\n",
]


def generate(path: Path, size: int) -> int:
    """Write `size` bytes of log; returns the number of lines."""
    block = bytearray()
    lines = 0
    for i in range(50_000):
        block += RARE[(i // 50_000) % len(RARE)] if i == 49_999 else ORDINARY[i % len(ORDINARY)]
    per_block = 50_000
    written = 0
    with open(path, "wb") as fh:
        n = 0
        while written < size:
            chunk = bytes(block)
            if n % len(RARE):  # vary which rare line closes each block
                chunk = chunk[: chunk.rfind(b"\n", 0, len(chunk) - 1) + 1] + RARE[n % len(RARE)]
            fh.write(chunk)
            written += len(chunk)
            lines += per_block
            n += 1
    return lines


def scan_in_process(path: Path, accelerated: bool, limit: int | None = None) -> dict:
    from doctor.commands.log_input import open_log
    from doctor.logscan.scanner import Scanner

    target = path
    if limit is not None and path.stat().st_size > limit:
        target = path.with_suffix(".head.log")
        with open(path, "rb") as src, open(target, "wb") as dst:  # copy the head in pieces: keep RSS honest
            left = limit
            while left > 0 and (piece := src.read(min(left, 4 << 20))):
                dst.write(piece)
                left -= len(piece)
    source = open_log(str(target))
    started = time.perf_counter()
    result = Scanner(accelerated=accelerated).scan(source)
    seconds = time.perf_counter() - started
    source.close()
    size = target.stat().st_size
    if target != path:
        target.unlink()
    return {"how": f"scanner in-process, {result.stats.prefilter}", "bytes": size, "seconds": seconds,
            "lines": result.stats.lines, "matches": sum(m.count for m in result.matches),
            "unexplained": result.unexplained.error_lines + result.unexplained.warning_lines,
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}  # this process's peak so far


def scan_cli(path: Path) -> dict:
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "doctor", "explain", str(path), "--no-live", "--json"],
                          capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - started
    if proc.returncode not in (0, 1, 2):
        raise SystemExit(f"explain failed ({proc.returncode}): {proc.stderr.strip()}")
    doc = json.loads(proc.stdout)
    return {"how": f"CLI end to end ({doc['log']['prefilter']})", "bytes": path.stat().st_size, "seconds": seconds,
            "lines": doc["log"]["lines"], "matches": sum(m["count"] for m in doc["matches"]),
            "unexplained": doc["unexplained"]["error_lines"] + doc["unexplained"]["warning_lines"],
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-gb", type=float, default=2.0)
    ap.add_argument("--fallback-mb", type=float, default=256.0)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    size = int(args.size_gb * 1e9)
    tmpdir = Path(tempfile.mkdtemp(prefix="explain-bench-"))
    path = tmpdir / "big.log"
    t0 = time.perf_counter()
    lines = generate(path, size)
    print(f"generated {path.stat().st_size / 1e9:.2f} GB, {lines:,} lines in {time.perf_counter() - t0:.1f} s "
          f"({os.cpu_count()} CPUs, Python {sys.version.split()[0]})", flush=True)
    try:
        rows = [scan_cli(path), scan_in_process(path, accelerated=True),
                scan_in_process(path, accelerated=False, limit=int(args.fallback_mb * 1e6))]
    finally:
        if not args.keep:
            path.unlink(missing_ok=True)
            tmpdir.rmdir()
    print(f"\n{'how':<40} {'MB':>8} {'s':>8} {'MB/s':>8} {'lines':>14} {'matched':>8} {'unexpl.':>8} {'peak RSS MiB':>13}")
    for r in rows:
        print(f"{r['how']:<40} {r['bytes'] / 1e6:>8,.0f} {r['seconds']:>8.1f} {r['bytes'] / 1e6 / r['seconds']:>8.0f} "
              f"{r['lines']:>14,} {r['matches']:>8,} {r['unexplained']:>8,} {r['peak_rss_mib']:>13.0f}")


if __name__ == "__main__":
    main()
