"""Issue 38: `plan`'s batched-decode estimate for a synthetic Q4_K_M GGUF (doctor/probe/synthetic_gguf.py) on the H200,
side by side with what was measured on the same shape: `probe --streams` reports (-p, the JSON of `v100-doctor probe
--streams 1,2,4 --engine-url ...`) and llama-batched-bench's table (-b, its raw text output). Without measurements it
prints the estimates alone, labelled as such. Shapes (--shape): 27b (64 layers of 5120/21760, 40/8 heads: the shape
of benchmarks/results/issue35-engine-probes/ and of the H200 step ratios' measurement), and the held-out 8b (32 of
4096/14336, 32/8) and 70b-24 (24 layers of 70B's 8192/28672, 64/8); vocab 8192 in all.

  python3 benchmarks/issue38_plan_vs_measured.py [--shape 27b] [--context 512] [-p probe.json] [-b batched-bench.txt]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from doctor.facts.modeldir.config import parse_config  # noqa: E402
from doctor.knowledge.gpus import spec_for_key  # noqa: E402
from doctor.model.quant_plan import QuantCandidate  # noqa: E402
from doctor.plan.build import build_plan  # noqa: E402

SHAPES = {"27b": (64, 5120, 21760, 40), "8b": (32, 4096, 14336, 32), "70b-24": (24, 8192, 28672, 64)}


def config(shape: str) -> dict:
    layers, hidden, inter, heads = SHAPES[shape]
    return {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": layers,
            "hidden_size": hidden, "intermediate_size": inter, "num_attention_heads": heads, "num_key_value_heads": 8,
            "head_dim": 128, "vocab_size": 8192, "max_position_embeddings": 32768, "torch_dtype": "float16"}
WITHIN = 0.15  # the bar: measured totals within 15% of the estimate
ROW = re.compile(r"^\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|[^|]*\|[^|]*\|[^|]*\|\s*([\d.]+)\s*\|")


def estimates(context: int, shape: str = "27b") -> dict[int, tuple[float, float, float, int]]:
    """streams -> (total low, mid, high, context per stream) for GGUF Q4_K_M with an f16 cache on the H200."""
    cand = QuantCandidate("gguf", "GGUF Q4_K_M", None, gguf_type="Q4_K_M", found="convert")
    plan = build_plan(f"synthetic {shape}", "issue 38", parse_config(config(shape)), (cand,), (spec_for_key("h200"),), context,
                      engine="llama.cpp")
    row = next(r for r in plan.rows if r.cache == "f16")
    return {c.streams: (c.total_tok_s.low, c.total_tok_s.mid, c.total_tok_s.high, c.context_per_stream)
            for c in row.concurrency}


def measured_probe(path: Path) -> dict[int, float]:
    doc = json.loads(path.read_text())
    return {r["streams"]: r["total_tok_s"] for r in doc["probe"]["streams"]["rounds"]}


def measured_bench(path: Path) -> dict[int, float]:
    """llama-batched-bench's S_TG t/s per B (the text generation speed over all B sequences)."""
    out = {}
    for line in path.read_text().splitlines():
        m = ROW.match(line.strip())
        if m:
            out[int(m.group(3))] = float(m.group(5))
    return out


def main() -> None:
    a = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    a.add_argument("--context", type=int, default=512, help="context per stream planned (default 512: a 128-token "
                                                            "prompt and 128 decoded, half of it in the cache)")
    a.add_argument("--shape", choices=sorted(SHAPES), default="27b")
    a.add_argument("-p", "--probe", type=Path, action="append", default=[])
    a.add_argument("-b", "--bench", type=Path, action="append", default=[])
    args = a.parse_args()
    est = estimates(args.context, args.shape)
    print(f"plan's estimate (an estimate: doctor/plan/concurrency.py), {args.shape}-like GGUF Q4_K_M f16 cache on the H200, "
          f"{args.context} tokens per stream:")
    for n, (lo, mid, hi, ctx) in est.items():
        print(f"  {n} streams x {ctx}: total {mid:g} tok/s ({lo:g}-{hi:g})")
    for kind, paths, read in (("probe --streams", args.probe, measured_probe), ("llama-batched-bench", args.bench,
                                                                                measured_bench)):
        for path in paths:
            got = read(path)
            print(f"measured, {kind} ({path.name}):")
            for n, total in sorted(got.items()):
                if n not in est:
                    print(f"  {n} streams: {total:g} tok/s (no estimate at {n})")
                    continue
                mid = est[n][1]
                off = (total - mid) / mid
                verdict = "within" if abs(off) <= WITHIN else "OUTSIDE"
                print(f"  {n} streams: {total:g} tok/s against {mid:g} estimated: {off:+.1%} ({verdict} "
                      f"{WITHIN:.0%})")


if __name__ == "__main__":
    main()
