"""Issue 27 on the device: the GGUF budget (doctor/knowledge/arithmetic/gguf_budget.py) against the buffer sizes llama.cpp
printed, and the llama.cpp probe's own clock against llama.cpp's perf counters. Reads the probe JSON files that
benchmarks/llamacpp_h200.sh wrote; writes one results JSON and a Markdown table.

    python3 benchmarks/llamacpp_budget_check.py --model M.gguf --probes DIR --out DIR
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from doctor.facts.modeldir.gguf_header import read_gguf  # noqa: E402
from doctor.knowledge.arithmetic.gguf_budget import GgufOption, compute_buffer_bytes, gguf_budget, kv_quantized  # noqa: E402
from doctor.model.engine_probe import LlamaCppProbe  # noqa: E402
from doctor.model.serialize import from_jsonable  # noqa: E402
from doctor.verdict.llamacpp import attribute  # noqa: E402

MIB = 1024 * 1024


def pct(measured: float | None, predicted: float) -> float | None:
    return None if measured in (None, 0) else round(100 * (predicted / measured - 1), 3)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--probes", required=True, help="folder of probe_*.json files (doctor.probe.llamacpp --json)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--bandwidth", type=float, default=4800.0, help="the card's GB/s for the ceiling (H200: 4800, datasheet)")
    ap.add_argument("--cc", default="9.0")
    a = ap.parse_args()
    g = read_gguf(a.model)
    assert g.shape is not None and g.weights is not None, g.problem
    rows = []
    for f in sorted(Path(a.probes).glob("probe_*.json")):
        doc = json.loads(f.read_text())  # v100-doctor/engine-probe/1 ({"llamacpp": [...]}), or an older bare list
        for p in doc["llamacpp"] if isinstance(doc, dict) else doc:
            opt = GgufOption(n_ctx=p["n_ctx"], cache_type_k=p["cache_type_k"], cache_type_v=p["cache_type_v"],
                             flash_attn=p["flash_attn"] != "off", n_gpu_layers=None if p["n_gpu_layers"] < 0 else p["n_gpu_layers"])
            b = gguf_budget(g.shape, g.weights, opt)
            host_compute = compute_buffer_bytes(g.shape, opt.n_ctx, opt.n_ubatch, opt.flash_attn, kv_quantized(opt.cache_type_k, opt.cache_type_v))[1]
            buf = p.get("buffers_mib") or {}
            meas = {"model_CUDA0": (buf.get("model") or {}).get("CUDA0"), "model_host": (buf.get("model") or {}).get("CPU_Mapped"),
                    "kv_CUDA0": (buf.get("kv") or {}).get("CUDA0"), "compute_CUDA0": (buf.get("compute") or {}).get("CUDA0"),
                    "compute_CUDA_Host": (buf.get("compute") or {}).get("CUDA_Host")}
            pred = {"model_CUDA0": b.model_gpu_bytes / MIB, "model_host": b.model_host_bytes / MIB, "kv_CUDA0": b.kv_gpu_bytes / MIB,
                    "compute_CUDA0": b.compute_gpu_bytes / MIB, "compute_CUDA_Host": host_compute / MIB}
            rows.append({"file": f.name, "backend": p["backend"], "outcome": p["outcome"], "n_ctx": p["n_ctx"],
                         "flash_attn": p["flash_attn"], "cache": f"{p['cache_type_k']}/{p['cache_type_v']}",
                         "offloaded_logged": p.get("offloaded"), "offloaded_predicted": b.offloaded_text,
                         "median_tok_s": p.get("median_tok_s"), "spread_pct": p.get("spread_pct"),
                         "wall_vs_perf_pct": p.get("wall_vs_perf_pct"), "runs": p.get("runs"), "error": p.get("error"),
                         "gpu_sm_clock_mhz": p.get("gpu_sm_clock_mhz"), "gpu_util_pct": p.get("gpu_util_pct"),
                         "gpu_memory_used_mib": p.get("gpu_memory_used_mib"),
                         "buffers": {k: {"measured_mib": meas[k], "predicted_mib": round(pred[k], 2), "err_pct": pct(meas[k], pred[k])}
                                     for k in meas},
                         "log_tail": p.get("log_tail", "")[-600:],
                         "verdict": attribute(from_jsonable(LlamaCppProbe, p), g.shape, g.weights, a.bandwidth, a.cc).summary})
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "budget_and_probe.json").write_text(json.dumps({"model": a.model, "tensor_bytes": g.weights.total_bytes,
                                                           "rows": rows}, indent=1) + "\n")
    lines = ["| probe | backend | outcome | ctx | FA | K/V | tok/s (median) | spread % | wall vs perf % | buffer: measured / predicted MiB (err %) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        cells = "; ".join(f"{k} {v['measured_mib']} / {v['predicted_mib']} ({v['err_pct']})" for k, v in r["buffers"].items()
                          if v["measured_mib"] is not None)
        lines.append(f"| {r['file']} | {r['backend']} | {r['outcome']} | {r['n_ctx']} | {r['flash_attn']} | {r['cache']} | "
                     f"{r['median_tok_s']} | {r['spread_pct']} | {r['wall_vs_perf_pct']} | {cells} |")
    (out / "budget_and_probe.md").write_text("\n".join(lines) + "\n")
    lines += ["", *[f"- {r['file']}: {r['verdict']}" for r in rows]]
    (out / "budget_and_probe.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
