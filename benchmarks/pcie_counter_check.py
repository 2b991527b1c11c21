"""Which NVML PCIe reading matches the bytes really moved? Checked against a loop whose traffic is known.

    python3 benchmarks/pcie_counter_check.py [--offload-gb 2] [--seconds 6]

Runs benchmarks/decode_loop.py with --offload-gb (it copies that many GB of pinned host memory to the
GPU every token and prints its tokens/s), and meanwhile reads, every 0.2 s, both NVML sources the
sampler can use: nvmlDeviceGetPcieThroughput (KB/s over a ~20 ms window) and the byte counters
NVML_FI_DEV_PCIE_COUNT_RX/TX_BYTES. The true host->GPU rate is host bytes per token x tokens/s.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--offload-gb", type=float, default=2.0)
    p.add_argument("--seconds", type=float, default=6.0)
    p.add_argument("--interval", type=float, default=0.2, help="seconds between readings (default 0.2)")
    args = p.parse_args()
    import pynvml

    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(0)
    ready = Path("/tmp/pcie-check-ready")
    ready.unlink(missing_ok=True)
    loop = subprocess.Popen([sys.executable, str(ROOT / "benchmarks" / "decode_loop.py"), "--weights-gb", str(2 * args.offload_gb),
                             "--offload-gb", str(args.offload_gb), "--seconds", str(args.seconds + 30), "--ready-file", str(ready)],
                            stdout=subprocess.PIPE, text=True)
    info = json.loads(loop.stdout.readline())
    while not ready.exists():
        time.sleep(0.05)
    rates: dict[str, list[float]] = {"throughput_rx": [], "throughput_tx": [], "counter_rx": [], "counter_tx": [],
                                     "counter_rx_mod32": [], "counter_tx_mod32": [], "raw_rx_max": []}
    last = None
    t_end = time.monotonic() + args.seconds
    while time.monotonic() < t_end:
        rates["throughput_rx"].append(pynvml.nvmlDeviceGetPcieThroughput(h, pynvml.NVML_PCIE_UTIL_RX_BYTES) * 1024 / 1e9)
        rates["throughput_tx"].append(pynvml.nvmlDeviceGetPcieThroughput(h, pynvml.NVML_PCIE_UTIL_TX_BYTES) * 1024 / 1e9)
        v = pynvml.nvmlDeviceGetFieldValues(h, [198, 197])
        now = (time.monotonic(), v[0].value.ullVal, v[1].value.ullVal) if v[0].nvmlReturn == 0 else None
        if now and last:
            dt = now[0] - last[0]
            rates["counter_rx"].append((now[1] - last[1]) / dt / 1e9)  # as read
            rates["counter_tx"].append((now[2] - last[2]) / dt / 1e9)
            rates["counter_rx_mod32"].append(((now[1] - last[1]) % 2**32) / dt / 1e9)  # if it wraps at 2^32
            rates["counter_tx_mod32"].append(((now[2] - last[2]) % 2**32) / dt / 1e9)
            rates["raw_rx_max"].append(max(now[1], last[1]) / 1e9)
        last = now
        time.sleep(args.interval)
    tok = [json.loads(line)["tok_s"] for line in (loop.stdout.readline() for _ in range(3)) if "tok_s" in line]
    loop.kill()  # this script's own child, by its handle
    loop.wait()
    true_rx = info["host_weight_bytes"] * statistics.median(tok) / 1e9
    print(f"decode loop: {info['host_weight_bytes'] / 1e9:.2f} GB copied host->GPU per token at {statistics.median(tok):.1f} tok/s"
          f" = {true_rx:.1f} GB/s really moved")
    print(f"{'NVML source':>16} {'median GB/s':>12} {'x true':>8}")
    for k, vs in rates.items():
        if vs:
            med = statistics.median(vs)
            ratio = f"{med / true_rx:.2f}" if "rx" in k and k != "raw_rx_max" else ""
            print(f"{k:>16} {med:>12.2f} {ratio:>8}")
    print(json.dumps({"true_rx_gbs": round(true_rx, 2), **{k: round(statistics.median(v), 2) for k, v in rates.items() if v}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
