"""A decode-like GPU loop: what `watch` and the sampler benchmark run against.

Per token, one batch-1 matrix-vector product through every "layer" of FP16 weights, then a host
sync, as LLM decode does: memory-bound, one token at a time. With --offload-gb, that many GB of the
weights live in pinned host memory and are copied to the GPU every token, as accelerate's CPU
offload does, so the PCIe link carries them on every step.

    python3 benchmarks/decode_loop.py --weights-gb 8 --seconds 60 --ready-file /tmp/ready
    python3 benchmarks/decode_loop.py --weights-gb 4 --offload-gb 2 --seconds 60

Needs torch with CUDA. Prints one JSON line per second: {"tok_s": ..., "tokens": ...}.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

HIDDEN = 4096
LAYER_MB = 256  # each "layer" is one FP16 matrix of about this size


def build(weights_gb: float, offload_gb: float = 0.0):
    """(step function, description). The step decodes one token and returns when the GPU is done."""
    import torch

    dev = torch.device("cuda")
    rows = LAYER_MB * 2**20 // (HIDDEN * 2)
    n_gpu = max(1, int((weights_gb - offload_gb) * 1e9 // (rows * HIDDEN * 2)))
    n_host = int(offload_gb * 1e9 // (rows * HIDDEN * 2))
    gpu_w = [torch.randn(rows, HIDDEN, device=dev, dtype=torch.float16) * 0.01 for _ in range(n_gpu)]
    host_w = [torch.full((rows, HIDDEN), 0.001, dtype=torch.float16).pin_memory() for _ in range(n_host)]  # values do not matter
    staging = [torch.empty(rows, HIDDEN, device=dev, dtype=torch.float16) for _ in range(2 if n_host else 0)]
    x0 = torch.randn(HIDDEN, device=dev, dtype=torch.float16)

    def step() -> None:
        x = x0
        for w in gpu_w:
            x = torch.mv(w, x)[:HIDDEN]
        for i, h in enumerate(host_w):  # the offloaded layers cross PCIe every token
            buf = staging[i % 2]
            buf.copy_(h, non_blocking=True)
            x = torch.mv(buf, x)[:HIDDEN]
        torch.cuda.synchronize()  # a decoder reads its logits back every token

    bytes_gpu, bytes_host = n_gpu * rows * HIDDEN * 2, n_host * rows * HIDDEN * 2
    return step, {"gpu_weight_bytes": bytes_gpu, "host_weight_bytes": bytes_host, "layers": n_gpu + n_host}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--weights-gb", type=float, default=8.0)
    p.add_argument("--offload-gb", type=float, default=0.0, help="GB of the weights kept in pinned host memory")
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--ready-file", help="touched once warm, so a script knows when to start watching")
    args = p.parse_args()
    step, info = build(args.weights_gb, args.offload_gb)
    for _ in range(20):  # warm-up: allocator, cuBLAS handles, clocks up
        step()
    print(json.dumps({"pid": os.getpid(), **info}), flush=True)
    if args.ready_file:
        open(args.ready_file, "w").close()
    t_end = time.monotonic() + args.seconds
    tokens, t_mark, n_mark = 0, time.monotonic(), 0
    while time.monotonic() < t_end:
        step()
        tokens += 1
        now = time.monotonic()
        if now - t_mark >= 1.0:
            print(json.dumps({"tok_s": round((tokens - n_mark) / (now - t_mark), 1), "tokens": tokens}), flush=True)
            t_mark, n_mark = now, tokens
    return 0


if __name__ == "__main__":
    sys.exit(main())
