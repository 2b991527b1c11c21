"""Check the probe's decode tok/s against an independent timing of the same generation.

The probe (doctor/probe/timing.py) times greedy single-token steps with perf_counter around a
window. This script shares none of that code: it loads the same model directory with its own
ExLlamaV2 calls, decodes the same number of tokens from a prompt of the same length, and times
each window with CUDA events recorded on the stream (GPU-side clock) as well as its own wall
clock. It loads the model the same number of times as the probe did and compares the probe's
reported pass with the matching pass here. Agreement within 3% is the bar.

usage (on a GPU machine, after `v100-doctor probe --synthetic --keep-synthetic DIR --json -o probe.json`):
  python benchmarks/probe_vs_independent.py --model DIR --probe-json probe.json [--out result.json]
prints a table; exit code 0 when within the bar, 1 when not.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time


def load(model_dir: str, max_seq_len: int, cache_mode: str):
    from exllamav2 import ExLlamaV2, ExLlamaV2Cache, ExLlamaV2Cache_Q4, ExLlamaV2Cache_Q8, ExLlamaV2Config

    cfg = ExLlamaV2Config(model_dir)
    cfg.max_seq_len = max_seq_len
    model = ExLlamaV2(cfg)
    cls = {"fp16": ExLlamaV2Cache, "q8": ExLlamaV2Cache_Q8, "q4": ExLlamaV2Cache_Q4}[cache_mode]
    cache = cls(model, max_seq_len=max_seq_len, lazy=True)
    model.load_autosplit(cache)
    return cfg, model, cache


def windows(torch, model, cache, prompt_len: int, warmup: int, runs: int, tokens: int) -> list[dict]:
    """Greedy decode; returns one dict per timed window (wall and CUDA-event seconds)."""
    vocab = model.config.vocab_size
    ids = (torch.arange(prompt_len, dtype=torch.long) * 7919 % (vocab - 1)).unsqueeze(0)
    out = []
    with torch.inference_mode():
        cache.current_seq_len = 0
        model.forward(ids[:, :-1], cache, preprocess_only=True)
        tok = ids[:, -1:]
        for _ in range(warmup):
            if cache.current_seq_len + 1 >= cache.max_seq_len:
                cache.current_seq_len = prompt_len - 1
            tok = model.forward(tok, cache)[:, -1, :].argmax(-1, keepdim=True).cpu()
        for _ in range(runs):
            cache.current_seq_len = prompt_len - 1
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            w0 = time.monotonic_ns()
            start.record()
            for _ in range(tokens):
                tok = model.forward(tok, cache)[:, -1, :].argmax(-1, keepdim=True).cpu()
            end.record()
            end.synchronize()
            wall = (time.monotonic_ns() - w0) / 1e9
            gpu = start.elapsed_time(end) / 1000
            out.append({"tokens": tokens, "wall_s": round(wall, 6), "event_s": round(gpu, 6),
                        "tok_s_wall": round(tokens / wall, 3), "tok_s_events": round(tokens / gpu, 3)})
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True)
    p.add_argument("--probe-json", required=True, help="the probe's report (v100-doctor probe --json)")
    p.add_argument("--out", help="write the comparison here as JSON")
    args = p.parse_args()
    report = json.load(open(args.probe_json))
    probe = report["probe"]["result"]
    passes = probe["passes"]
    reported = probe["reported_pass"]
    runs = passes[0]["runs"]
    tokens, n_runs, warmup = runs[0]["tokens"], len(runs), passes[0]["warmup_tokens"]

    import torch

    rows = []
    for index in range(1, len(passes) + 1):
        cfg, model, cache = load(args.model, probe["max_seq_len"], probe["cache_mode"] if probe["cache_mode"] in ("fp16", "q8", "q4") else "fp16")
        w = windows(torch, model, cache, probe["prompt_tokens"], warmup, n_runs, tokens)
        rows.append({"pass": index, "windows": w, "median_tok_s_events": statistics.median(x["tok_s_events"] for x in w),
                     "median_tok_s_wall": statistics.median(x["tok_s_wall"] for x in w)})
        model.unload()
        del model, cache
        torch.cuda.empty_cache()
    probe_tok_s = statistics.median(r["tok_s"] for r in passes[reported - 1]["runs"])
    mine = rows[reported - 1] if reported - 1 < len(rows) else rows[-1]
    diff_events = 100 * (probe_tok_s - mine["median_tok_s_events"]) / mine["median_tok_s_events"]
    diff_wall = 100 * (probe_tok_s - mine["median_tok_s_wall"]) / mine["median_tok_s_wall"]
    print(f"{'':<28}{'tok/s':>10}")
    print(f"{'probe (reported pass ' + str(reported) + ')':<28}{probe_tok_s:>10.2f}")
    for r in rows:
        print(f"{'independent pass ' + str(r['pass']) + ' (events)':<28}{r['median_tok_s_events']:>10.2f}")
        print(f"{'independent pass ' + str(r['pass']) + ' (wall)':<28}{r['median_tok_s_wall']:>10.2f}")
    print(f"difference vs CUDA events: {diff_events:+.2f}%   vs wall: {diff_wall:+.2f}%   (bar: 3%)")
    result = {"probe_tok_s": probe_tok_s, "reported_pass": reported, "independent": rows,
              "diff_pct_events": round(diff_events, 3), "diff_pct_wall": round(diff_wall, 3),
              "within_3pct": abs(diff_events) <= 3.0, "device": torch.cuda.get_device_name(0)}
    if args.out:
        json.dump(result, open(args.out, "w"), indent=2)
    return 0 if result["within_3pct"] else 1


if __name__ == "__main__":
    sys.exit(main())
