"""Issue 37's sweep on the device: llama.cpp decode speed and peak memory over many synthetic shapes, some held out.

  python3 benchmarks/speed_shapes.py write DIR            the Q4_K_M GGUFs (doctor/probe/synthetic_gguf.py; fast)
  python3 benchmarks/speed_shapes.py run DIR BENCH RUNS   llama-bench tg128 per option, NVML's peak over the baseline
                                                          beside it; one JSON line per option appended to RUNS
                                                          (resumable: options already in RUNS are skipped)
  python3 benchmarks/speed_shapes.py inputs RUNS OUT      RUNS as benchmarks/speed_model_fit.py's inputs (role fit or
                                                          check as SHAPES says; held-out shapes are never fitted)

Each option: `llama-bench -m X -ngl 999 -fa on -p 0 -n 128 -d DEPTH -r 3 -ctk C -ctv C -o json` (decode at DEPTH
tokens of cache, its own warm-up run). DEPTH 0 and 4096; f16 and q8_0 caches. Q8_0 and Q4_0 files come from the
Q4_K_M ones by `llama-quantize --allow-requantize` where the binary is beside llama-bench. Nothing here imports
more than the doctor's writer and shape arithmetic.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from doctor.probe import synthetic_gguf  # noqa: E402
from doctor.probe.synthetic import Shape  # noqa: E402

# name: (role, layers, hidden, ffn, heads, kv_heads). "check" shapes are held out of every fit.
SHAPES: dict[str, tuple[str, int, int, int, int, int]] = {
    "27b-64": ("fit", 64, 5120, 21760, 40, 8),
    "27b-16": ("fit", 16, 5120, 21760, 40, 8),
    "8b-gqa4": ("fit", 32, 4096, 14336, 32, 8),
    "3b-gqa3": ("fit", 28, 3072, 8192, 24, 8),
    "70b-slice20": ("fit", 20, 8192, 28672, 64, 8),
    "7b-mha": ("fit", 32, 4096, 11008, 32, 32),
    "1b-gqa4": ("check", 16, 2048, 8192, 32, 8),
    "14b-gqa5": ("check", 48, 5120, 13824, 40, 8),
    "70b-slice40": ("check", 40, 8192, 28672, 64, 8),
    "8b-mha": ("check", 32, 4096, 14336, 32, 32),
}
OPTIONS = [("Q4_K_M", "f16", 0), ("Q4_K_M", "f16", 4096), ("Q4_K_M", "q8_0", 4096), ("Q8_0", "f16", 0),
           ("Q4_0", "f16", 0)]


def shape(name: str) -> Shape:
    _, layers, hidden, ffn, heads, kv = SHAPES[name]
    return replace(Shape(), layers=layers, hidden=hidden, intermediate=ffn, heads=heads, kv_heads=kv,
                   head_dim=hidden // heads, vocab=8192)


def gguf_path(d: Path, name: str, gguf_type: str) -> Path:
    return d / f"{name}-{gguf_type.lower()}.gguf"


def write(d: Path) -> None:
    d.mkdir(parents=True, exist_ok=True)
    for name in SHAPES:
        p = gguf_path(d, name, "Q4_K_M")
        if not p.exists():
            print(name, synthetic_gguf.write(str(p), shape(name)).label, flush=True)


class PeakSampler(threading.Thread):
    """NVML's used memory every 20 ms: the highest reading, less the reading before the engine started."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        import pynvml
        pynvml.nvmlInit()
        self.nvml, self.h = pynvml, pynvml.nvmlDeviceGetHandleByIndex(0)
        self.base = self.used()
        self.peak, self.stop = self.base, threading.Event()

    def used(self) -> int:
        return int(self.nvml.nvmlDeviceGetMemoryInfo(self.h).used)

    def run(self) -> None:
        while not self.stop.is_set():
            self.peak = max(self.peak, self.used())
            time.sleep(0.02)


def requantized(d: Path, bench: str, name: str, gguf_type: str) -> Path | None:
    p = gguf_path(d, name, gguf_type)
    if gguf_type == "Q4_K_M" or p.exists():
        return p
    quant = Path(bench).with_name("llama-quantize")
    if not quant.exists():
        return None
    r = subprocess.run([str(quant), "--allow-requantize", str(gguf_path(d, name, "Q4_K_M")), str(p), gguf_type],
                       capture_output=True, text=True, timeout=600)
    return p if r.returncode == 0 else None


def run(d: Path, bench: str, runs: Path) -> None:
    done = set()
    if runs.exists():
        done = {(r["shape"], r["gguf_type"], r["cache"], r["depth"]) for r in map(json.loads, runs.read_text().splitlines())}
    for name in SHAPES:
        for gguf_type, cache, depth in OPTIONS:
            if (name, gguf_type, cache, depth) in done:
                continue
            model = requantized(d, bench, name, gguf_type)
            if model is None:
                continue
            cmd = [bench, "-m", str(model), "-ngl", "999", "-fa", "on", "-p", "0", "-n", "128", "-d", str(depth),
                   "-r", "3", "-ctk", cache, "-ctv", cache, "-o", "json"]
            s = PeakSampler()
            s.start()
            t0 = time.time()
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            s.stop.set()
            s.join()
            rec = {"shape": name, "role": SHAPES[name][0], "dims": list(SHAPES[name][1:]), "gguf_type": gguf_type,
                   "cache": cache, "depth": depth, "rc": r.returncode, "wall_s": round(time.time() - t0, 1),
                   "nvml_peak_delta_bytes": s.peak - s.base, "nvml_baseline_bytes": s.base, "file_bytes": model.stat().st_size}
            try:
                b = json.loads(r.stdout)[0]
                rec.update(samples_ts=b["samples_ts"], avg_ts=b["avg_ts"], stddev_ts=b["stddev_ts"])
            except (ValueError, IndexError, KeyError):
                rec["stderr_tail"] = r.stderr[-2000:]
            with runs.open("a") as fh:
                fh.write(json.dumps(rec) + "\n")
            print(json.dumps({k: rec.get(k) for k in ("shape", "gguf_type", "cache", "depth", "avg_ts", "nvml_peak_delta_bytes")}),
                  flush=True)


def inputs(runs: Path, out: Path) -> None:
    """RUNS as speed_model_fit.py's points: one group per shape; past = depth + 64 (the middle of the 128 timed)."""
    pts = []
    for r in map(json.loads, runs.read_text().splitlines()):
        if "samples_ts" not in r:
            continue
        layers, hidden, ffn, heads, kv = r["dims"]
        pts.append({"name": f"{r['shape']} {r['gguf_type']} {r['cache']} depth {r['depth']}", "group": r["shape"],
                    "role": r["role"] if r["gguf_type"] == "Q4_K_M" else "type", "gguf_type": r["gguf_type"],
                    "shape": {"layers": layers, "hidden": hidden, "intermediate": ffn, "heads": heads, "kv_heads": kv,
                              "head_dim": hidden // heads, "vocab": 8192},
                    "past": r["depth"] + 64, "cache": r["cache"], "tok_s": r["samples_ts"],
                    "nvml_peak_delta_bytes": r["nvml_peak_delta_bytes"], "source": str(runs)})
    out.write_text(json.dumps({"about": "llama-bench on synthetic GGUFs (benchmarks/speed_shapes.py)", "points": pts},
                              indent=1) + "\n")


if __name__ == "__main__":
    verb, *args = sys.argv[1:] or ["help"]
    if verb == "write":
        write(Path(args[0]))
    elif verb == "run":
        run(Path(args[0]), args[1], Path(args[2]))
    elif verb == "inputs":
        inputs(Path(args[0]), Path(args[1]))
    else:
        print(__doc__)
