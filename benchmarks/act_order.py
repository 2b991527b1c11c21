"""Does GPTQ act-order (desc_act) cost decode speed in ExLlamaV2? Measure it, don't assume it.

Three synthetic 4-bit GPTQ models with 27B-like layer shapes (hidden 5120, intermediate 21760,
40/8 heads, group 128; random qweight/qzeros/scales, which run ExLlamaV2's real GPTQ kernels):
  gptq             no g_idx at all
  gptq-sequential  g_idx = arange(in) // 128 (trivial order; ExLlamaV2 still builds a q_perm)
  gptq-act-order   g_idx shuffled (desc_act): ExLlamaV2 reorders the rows at load time
Each is timed twice:
  1. wall-clock decode tok/s through the doctor's own probe (a fresh worker per model, each model
     loaded twice so a host-bound first load cannot pass for the speed);
  2. GPU kernel time per token (torch.profiler, 32 tokens after a 300-token warm-up), which still
     shows a kernel's cost where the wall clock is host-bound and would hide it.

usage (GPU machine): python benchmarks/act_order.py [--layers 16] [--out results.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

VARIANTS = ("gptq", "gptq-sequential", "gptq-act-order")


def kernel_time(model_dir: str, warmup: int = 300, tokens: int = 32) -> dict:
    """In this process: ms of CUDA kernel time per decoded token, total and in the GPTQ GEMM kernels."""
    import torch
    from exllamav2 import ExLlamaV2, ExLlamaV2Cache, ExLlamaV2Config
    from torch.profiler import ProfilerActivity, profile

    cfg = ExLlamaV2Config(model_dir)
    cfg.max_seq_len = 1024
    model = ExLlamaV2(cfg)
    cache = ExLlamaV2Cache(model, max_seq_len=1024, lazy=True)
    model.load_autosplit(cache)
    tok = torch.tensor([[1]])
    with torch.inference_mode():
        for _ in range(warmup):
            if cache.current_seq_len + 2 >= cache.max_seq_len:
                cache.current_seq_len = 0
            tok = model.forward(tok, cache)[:, -1, :].argmax(-1, keepdim=True).cpu()
        cache.current_seq_len = 128
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(tokens):
                tok = model.forward(tok, cache)[:, -1, :].argmax(-1, keepdim=True).cpu()
            torch.cuda.synchronize()
    total = gemm = 0.0
    for e in prof.key_averages():
        t = getattr(e, "device_time_total", None) or getattr(e, "cuda_time_total", 0.0)
        if e.key.startswith(("cudaLaunch", "cudaGraph", "cudaStream", "cudaMemcpy", "cudaDevice", "cudaEvent")):
            continue
        total += t
        if "gemm" in e.key.lower() or "gptq" in e.key.lower():
            gemm += t
    model.unload()
    return {"kernel_ms_per_token": round(total / 1000 / tokens, 4), "gemm_ms_per_token": round(gemm / 1000 / tokens, 4)}


def probe(model_dir: str) -> dict:
    from doctor.probe.protocol import ProbeSpec
    from doctor.probe.runner import run_probe

    rep = run_probe(ProbeSpec(model_path=model_dir, max_seq_len=2048, second_pass="always", measure_bandwidth=False,
                              warmup_tokens=300, runs=3, tokens=256))
    if not rep.ok:
        return {"status": rep.status, "error": rep.summary, "detail": rep.error_detail[-800:]}
    r = rep.result
    return {"status": "ok", "reported_pass": r.reported_pass, "weight_gb": round(r.memory.weight_bytes_gpu / 1e9, 3),
            "act_order": r.shape.act_order,
            "passes": [{"pass": p.index, "tok_s": [x.tok_s for x in p.runs], "median": round(p.median_tok_s, 2),
                        "faults_per_token": round(p.faults_per_token, 1), "cpu_wall": p.cpu_wall, "flag": p.flag}
                       for p in r.passes]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--layers", type=int, default=16)
    ap.add_argument("--out")
    ap.add_argument("--kernels-only", nargs="+", metavar="DIR", help=argparse.SUPPRESS)  # the child mode
    args = ap.parse_args()
    if args.kernels_only:
        print(json.dumps({d: kernel_time(d) for d in args.kernels_only}))
        return 0
    from dataclasses import replace

    from doctor.facts.engines.build_cache import exllamav2_location
    from doctor.probe.synthetic import QWEN_27B_LIKE, build

    root = tempfile.mkdtemp(prefix="act-order-")
    dirs = {}
    for v in VARIANTS:
        dirs[v] = os.path.join(root, v)
        build(dirs[v], v, replace(QWEN_27B_LIKE, layers=args.layers), exllamav2_dir=exllamav2_location(), seed=1)
    results = {v: {"probe": probe(dirs[v])} for v in VARIANTS}
    out = subprocess.run([sys.executable, __file__, "--kernels-only", *dirs.values()], capture_output=True, text=True)
    try:
        kernels = json.loads(out.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        kernels = {d: {"error": out.stderr[-800:]} for d in dirs.values()}
    for v in VARIANTS:
        results[v]["kernels"] = kernels.get(dirs[v], {})
    print(f"{'variant':<18}{'pass 1 tok/s':>14}{'pass 2 tok/s':>14}{'reported':>10}{'faults/tok p1':>15}{'kernel ms/tok':>15}{'gemm ms/tok':>13}")
    for v in VARIANTS:
        pr, k = results[v]["probe"], results[v]["kernels"]
        if pr.get("status") != "ok":
            print(f"{v:<18} probe {pr.get('status')}: {pr.get('error')}")
            continue
        p1, p2 = pr["passes"][0], pr["passes"][-1]
        print(f"{v:<18}{p1['median']:>14.1f}{p2['median']:>14.1f}{pr['reported_pass']:>10}{p1['faults_per_token']:>15.1f}"
              f"{k.get('kernel_ms_per_token', float('nan')):>15.3f}{k.get('gemm_ms_per_token', float('nan')):>13.3f}")
    base = results["gptq"]
    ok = [v for v in VARIANTS if results[v]["probe"].get("status") == "ok"]
    if "gptq" in ok and "gptq-act-order" in ok:
        def med(v):
            pr = results[v]["probe"]
            return pr["passes"][pr["reported_pass"] - 1]["median"]
        ratio = med("gptq") / med("gptq-act-order")
        kb, ka = base["kernels"].get("gemm_ms_per_token"), results["gptq-act-order"]["kernels"].get("gemm_ms_per_token")
        summary = {"decode_time_factor_wall": round(ratio, 4),
                   "decode_time_factor_gemm_kernels": round(ka / kb, 4) if ka and kb else None}
        results["summary"] = summary
        print(f"act-order / no g_idx decode time: wall {ratio:.3f}x, GEMM kernels "
              f"{summary['decode_time_factor_gemm_kernels'] if summary['decode_time_factor_gemm_kernels'] else 'n/a'}x")
    import torch

    results["device"] = torch.cuda.get_device_name(0)
    results["layers"] = args.layers
    if args.out:
        json.dump(results, open(args.out, "w"), indent=2, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
