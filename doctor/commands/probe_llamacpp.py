"""`v100-doctor probe --model FILE.gguf` (or --engine llama.cpp): the llama.cpp probe and its verdict, in plain text.

The probe (doctor/probe/llamacpp.py) runs in a child, through llama-cpp-python or an installed llama-bench; the
verdict (doctor/verdict/llamacpp.py) sets it against the ceiling for this GGUF's bytes per token on this card.
Exit: 0 measured, 2 the engine died, failed or timed out, 3 nothing to run it with (not installed).
"""

from __future__ import annotations

import argparse
import sys

from doctor.commands.engine_output import emit_engine_probe
from doctor.facts.engines import engine_env
from doctor.facts.nvml.isolated import read_isolated
from doctor.knowledge.gpus import spec_for_name
from doctor.model.exitcodes import ExitCode
from doctor.model.model_dir import ModelFacts
from doctor.model.plan import Plan
from doctor.model.serialize import to_jsonable
from doctor.model.unknown import known
from doctor.probe.llamacpp import ProbeOptions, probe
from doctor.verdict.llamacpp import attribute


def wants_llamacpp(plan: Plan, model: ModelFacts | None) -> bool:
    if plan.engine is not None:
        return str(plan.engine) in ("llama.cpp", "ollama")
    return model is not None and model.gguf is not None


def run(args: argparse.Namespace, plan: Plan, model: ModelFacts) -> int:
    launch = plan.engine_launch
    o = ProbeOptions(n_ctx=(launch.n_ctx if launch and launch.n_ctx else None) or plan.max_seq_len or 4096,
                     n_gpu_layers=launch.n_gpu_layers if launch and launch.n_gpu_layers is not None else -1,
                     flash_attn=(launch.flash_attn if launch and launch.flash_attn else "on"),
                     cache_type_k=(launch.cache_type_k if launch and launch.cache_type_k else "f16"),
                     cache_type_v=(launch.cache_type_v if launch and launch.cache_type_v else "f16"),
                     tokens=args.tokens, runs=max(args.runs, 3), gpu_index=plan.gpu_index)
    print(f"v100-doctor: probing {model.path} with llama.cpp (ctx {o.n_ctx}, flash attention {o.flash_attn}, K/V "
          f"{o.cache_type_k}/{o.cache_type_v}) ...", file=sys.stderr)
    results = probe(str(model.resolved if known(model.resolved) else model.path), o)
    nvml = read_isolated()  # in a child with a deadline: libnvidia-ml.so can hang or crash (issue 25)
    gpu = next((g for g in nvml.gpus if g.index == plan.gpu_index), None)
    spec = spec_for_name(gpu.name, gpu.memory_total_mib if known(gpu.memory_total_mib) else None) \
        if gpu is not None and known(gpu.name) else None
    cc = gpu.compute_capability if gpu is not None and known(gpu.compute_capability) else (spec.cc if spec else None)
    out, lines = [], []
    for r in results:
        line = f"{r.backend}: {r.outcome}"
        if r.median_tok_s:
            line += (f", {r.median_tok_s:g} tok/s median of {len(r.runs) - r.dropped_runs} runs (spread {r.spread_pct}%"
                     + (f", probe clock vs llama.cpp's counters {r.wall_vs_perf_pct:+.2f}%" if r.wall_vs_perf_pct is not None
                        else "") + f"), {r.offloaded}")
        verdict = None
        g = model.gguf
        if g is not None and g.shape is not None and g.weights is not None and spec is not None and cc:
            verdict = attribute(r, g.shape, g.weights, spec.bandwidth_gbs, cc, engine_env(), spec.fp16_slow)
            line += f"\n  verdict: {verdict.summary}" + "".join(f"\n  - {c['text']} [{c['source']}]" for c in verdict.causes)
            if verdict.engine_gap is not None:
                line += f"\n  other engines here: {verdict.engine_gap.summary}"
        elif r.error:
            line += f"\n  {r.error}"
        out.append({"probe": to_jsonable(r), "verdict": to_jsonable(verdict) if verdict else None})
        lines.append(line)
    emit_engine_probe(args, "\n".join(lines), out)
    last = results[-1]
    if last.outcome == "ok":
        return ExitCode.OK
    return ExitCode.USAGE if last.outcome == "not-installed" else ExitCode.FAILURES
