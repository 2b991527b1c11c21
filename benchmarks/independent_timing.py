"""An independent decode timing of one ExLlamaV2 model directory, to check the probe against (issue 17).

Written apart from the doctor's probe (it imports nothing from `doctor/`): same protocol, other code.
Protocol: prompt of N tokens prefilled, W warm-up decode tokens, then runs of T tokens each re-decoded
from the prompt's end (greedy argmax copied to the CPU every step; cuda.synchronize + perf_counter around
each run), repeated until the last K runs lie within S% of each other or the time budget ends. Each run
records the hypervisor's steal time (/proc/stat) and this process's involuntary context switches.
Also: VRAM as torch saw it, and (--fresh-lengths) decode at context lengths never met before with
torch's cuDNN attention on, then off, then at lengths already met: the first-use fix measured.

  python benchmarks/independent_timing.py --model DIR --max-seq-len 4096 --out independent.json
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import time


def steal_and_total() -> tuple[int, int]:
    with open("/proc/stat") as fh:
        v = [int(x) for x in fh.readline().split()[1:9]]
    return v[7], sum(v)


def spread(xs: list[float]) -> float:
    return 100.0 * (max(xs) - min(xs)) / statistics.median(xs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--max-seq-len", type=int, default=4096)
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--warmup", type=int, default=256)
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--window", type=int, default=3)
    ap.add_argument("--settle-pct", type=float, default=3.0)
    ap.add_argument("--max-runs", type=int, default=15)
    ap.add_argument("--budget-s", type=float, default=45.0)
    ap.add_argument("--fresh-lengths", type=int, default=0, metavar="N", help="steps per fresh-length window (0: skip)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    import torch
    from exllamav2 import ExLlamaV2, ExLlamaV2Cache, ExLlamaV2Config

    t_start = time.perf_counter()
    cfg = ExLlamaV2Config(a.model)
    cfg.max_seq_len = a.max_seq_len
    model = ExLlamaV2(cfg)
    cache = ExLlamaV2Cache(model, max_seq_len=a.max_seq_len, lazy=True)
    model.load_autosplit(cache)
    torch.cuda.synchronize()
    load_s = time.perf_counter() - t_start
    after_load = torch.cuda.memory_allocated()
    load_peak = torch.cuda.max_memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    gen = torch.Generator().manual_seed(1)
    prompt = torch.randint(0, cfg.vocab_size, (1, a.prompt), generator=gen)
    last = prompt[:, -1:]

    def forward_steps(n: int) -> None:
        nonlocal last
        for _ in range(n):
            logits = model.forward(last, cache)
            last = logits[:, -1, :].argmax(-1, keepdim=True).cpu()

    runs = []
    with torch.inference_mode():
        cache.current_seq_len = 0
        model.forward(prompt[:, :-1], cache, preprocess_only=True)
        t0 = time.perf_counter()
        forward_steps(a.warmup)
        torch.cuda.synchronize()
        warm_tok_s = a.warmup / (time.perf_counter() - t0)
        high = cache.current_seq_len
        t_runs = time.perf_counter()
        while True:
            cache.current_seq_len = a.prompt - 1
            s0, n0 = steal_and_total(), resource.getrusage(resource.RUSAGE_SELF).ru_nivcsw
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            forward_steps(a.tokens)
            torch.cuda.synchronize()
            dt = time.perf_counter() - t0
            s1, n1 = steal_and_total(), resource.getrusage(resource.RUSAGE_SELF).ru_nivcsw
            runs.append({"tok_s": round(a.tokens / dt, 3), "seconds": round(dt, 5),
                         "steal_pct": round(100.0 * (s1[0] - s0[0]) / max(1, s1[1] - s0[1]), 2),
                         "involuntary_switches": n1 - n0})
            speeds = [r["tok_s"] for r in runs]
            settled = len(runs) >= a.window and spread(speeds[-a.window:]) <= a.settle_pct
            if settled or len(runs) >= a.max_runs or (len(runs) >= a.window and time.perf_counter() - t_runs > a.budget_s):
                break
        fresh = {}
        if a.fresh_lengths:
            def window_at(start: int) -> float:
                cache.current_seq_len = start
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                forward_steps(a.fresh_lengths)
                torch.cuda.synchronize()
                return round(a.fresh_lengths / (time.perf_counter() - t0), 2)
            start = high + 8
            fresh["cudnn_sdp_on_new_lengths_tok_s"] = window_at(start)
            torch.backends.cuda.enable_cudnn_sdp(False)
            fresh["cudnn_sdp_off_new_lengths_tok_s"] = window_at(start + a.fresh_lengths + 8)
            fresh["cudnn_sdp_off_seen_lengths_tok_s"] = window_at(a.prompt - 1)
            torch.backends.cuda.enable_cudnn_sdp(True)
            fresh["steps_per_window"] = a.fresh_lengths
    speeds = [r["tok_s"] for r in runs]
    window = speeds[-a.window:]
    out = {
        "script": "benchmarks/independent_timing.py", "model": a.model, "max_seq_len": a.max_seq_len,
        "protocol": {"prompt": a.prompt, "warmup": a.warmup, "tokens": a.tokens, "window": a.window,
                     "settle_pct": a.settle_pct, "budget_s": a.budget_s},
        "torch": torch.__version__, "device": torch.cuda.get_device_name(0),
        "load_s": round(load_s, 2), "warmup_tok_s": round(warm_tok_s, 2), "runs": runs,
        "settled": spread(window) <= a.settle_pct if len(window) >= 2 else False,
        "window_median_tok_s": statistics.median(window), "window_spread_pct": round(spread(window), 2),
        "vram": {"allocated_after_load_bytes": after_load, "load_peak_allocated_bytes": load_peak,
                 "decode_peak_allocated_bytes": torch.cuda.max_memory_allocated(),
                 "reserved_bytes": torch.cuda.memory_reserved(),
                 "cache_bytes": int(sum(cache.footprint())) if hasattr(cache, "footprint") else None},
        "fresh_lengths": fresh,
    }
    with open(a.out, "w") as fh:
        json.dump(out, fh, indent=2)
    print(json.dumps({k: out[k] for k in ("window_median_tok_s", "window_spread_pct", "settled", "fresh_lengths")}))


if __name__ == "__main__":
    main()
