"""Issue 38: `plan`'s batched-decode estimate for a synthetic Q4_K_M GGUF (doctor/probe/synthetic_gguf.py) on the H200,
side by side with what was measured on the same shape: `probe --streams` reports (-p, the JSON of `v100-doctor probe
--streams 1,2,4 --engine-url ...`) and llama-batched-bench's table (-b, its raw text output). Without measurements it
prints the estimates alone, labelled as such. Shapes (--shape): 27b (64 layers of 5120/21760, 40/8 heads: the shape
of benchmarks/results/issue35-engine-probes/ and of the H200 step ratios' measurement), and the held-out 8b (32 of
4096/14336, 32/8) and 70b-24 (24 layers of 70B's 8192/28672, 64/8); vocab 8192 in all.

With --exl2 MODEL_DIR: ExLlamaV2 instead, for the model `probe --streams 1,2,4 --model MODEL_DIR` drove (its
config.json: the shape; its quantization_config: GPTQ bits or EXL2 bpw), at the cache the probe ran with (the
report's probe.streams.cache_mode) and in the mode that ran: paged (flash-attn: batched) or unpaged (no flash-attn:
the plan's ExLlamaV2 rows without flash-attn, whose total stays one stream's).

  python3 benchmarks/issue38_plan_vs_measured.py [--shape 27b] [--context 512] [-p probe.json] [-b batched-bench.txt]
  python3 benchmarks/issue38_plan_vs_measured.py --exl2 MODEL_DIR -p probe.json [--context 512]
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


def exl2_estimates(model_dir: Path, context: int, cache: str, paged: bool) -> tuple[dict[int, tuple[float, float, float, int]], str]:
    """streams -> (total low, mid, high, context per stream) for ExLlamaV2 on the H200, and what was planned."""
    cfg = json.loads((model_dir / "config.json").read_text())
    q = cfg.get("quantization_config") or {}
    if q.get("quant_method") == "exl2":
        cand = QuantCandidate("exl2", f"EXL2 {q['bits']:g} bpw", None, bpw=float(q["bits"]), found="convert")
    elif q.get("quant_method") == "gptq" or "bits" in q:
        cand = QuantCandidate("gptq", f"GPTQ {q.get('bits', 4)}-bit", None, bpw=float(q.get("bits", 4)),
                              group_size=q.get("group_size"), found="convert")
    else:
        cand = QuantCandidate("fp16", "FP16", None, bpw=16.0, found="convert")
    plan = build_plan(str(model_dir), "issue 38", parse_config(cfg), (cand,), (spec_for_key("h200"),), context,
                      engine="exllamav2", exl2_flash_attn=paged)
    row = next(r for r in plan.rows if r.cache == cache)
    what = (f"ExLlamaV2 {cand.label}, {cfg.get('num_hidden_layers')} layers of {cfg.get('hidden_size')}/"
            f"{cfg.get('intermediate_size')}, {cache} cache, {'paged (flash-attn)' if paged else 'unpaged (no flash-attn)'}")
    return ({c.streams: (c.total_tok_s.low, c.total_tok_s.mid, c.total_tok_s.high, c.context_per_stream)
             for c in row.concurrency}, what)


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
    a.add_argument("--exl2", type=Path, metavar="MODEL_DIR", help="ExLlamaV2: the model the probe drove")
    args = a.parse_args()
    if args.exl2:
        if not args.probe:
            a.error("--exl2 needs -p probe.json: the cache and the mode come from the probe that ran")
        st = json.loads(args.probe[0].read_text())["probe"]["streams"]
        est, what = exl2_estimates(args.exl2, args.context, st.get("cache_mode") or "fp16", st.get("mode") == "paged")
        print(f"probe ran: {st.get('engine')} {st.get('mode')} ({st.get('mode_why')})")
    else:
        est, what = estimates(args.context, args.shape), f"{args.shape}-like GGUF Q4_K_M f16 cache"
    print(f"plan's estimate (an estimate: doctor/plan/concurrency.py), {what} on the H200, "
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
