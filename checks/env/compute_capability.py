"""`compute-capability`: the card's cc and what it rules out. It sets the frame; it is not a failure."""

from __future__ import annotations

from checks.base import Check, CheckContext
from doctor.knowledge.attention import FLASH_ATTN, NUMBER_FORMATS, cc_at_least, flash_attn_supports
from doctor.knowledge.cuda import DRIVER_BRANCHES, NVCC_ARCHS
from doctor.knowledge.engines import TRITON
from doctor.knowledge.gpus import spec_for_key, spec_for_name
from doctor.model.findings import Finding, Status
from doctor.model.ids import CheckId


def capability_profile(cc: str) -> dict:
    """Everything a cc rules in or out, from the knowledge base (shared with later checks)."""
    branch = next((b for b in DRIVER_BRANCHES if any(cc.startswith(p) for p in b.cc_prefixes)), None)
    return {
        "cc": cc,
        "sm": "sm_" + cc.replace(".", ""),
        "bf16_native": cc_at_least(cc, NUMBER_FORMATS["bf16"][0]),
        "fp8_native": cc_at_least(cc, NUMBER_FORMATS["fp8"][0]),
        "int8_tensor_cores": cc_at_least(cc, NUMBER_FORMATS["int8_tensor_cores"][0]),
        "triton": cc_at_least(cc, TRITON.min_cc),
        "flash_attn": {f"fa{g.major}": flash_attn_supports(g, cc) for g in FLASH_ATTN},
        "nvcc_majors_that_compile_for_it": [r.cuda_major for r in NVCC_ARCHS
                                            if cc_at_least(cc, r.min_cc) and cc_at_least(r.max_cc, cc)],
        "architecture": branch.architecture if branch else "unknown",
        "last_driver_branch": branch.last_branch if branch else None,
    }


def run(ctx: CheckContext) -> Finding:
    card = ctx.card()
    if card is None:
        gpu = ctx.target_gpu()
        if gpu is None:
            return CHECK.finding(Status.SKIP, "skipped: no GPU here and no --target-gpu to plan for")
        return CHECK.finding(Status.WARN, "Compute capability unknown: the checks below cannot judge kernels for this card",
                             {"reason": str(gpu.compute_capability)})
    cc, name, planned = card
    p = capability_profile(cc)
    lacks = [name for name, ok in (("bf16", p["bf16_native"]), ("fp8", p["fp8_native"]),
                                   ("FlashAttention-2", p["flash_attn"]["fa2"])) if not ok]
    notes = []
    if 13 not in p["nvcc_majors_that_compile_for_it"]:
        notes.append("CUDA 13 cannot compile for it (use nvcc 12.x)")
    if p["last_driver_branch"]:
        notes.append(f"driver branches after R{p['last_driver_branch']} drop it")
    gpu = ctx.target_gpu()
    mem = gpu.memory_total_mib if gpu is not None and not planned and isinstance(gpu.memory_total_mib, (int, float)) else None
    spec = spec_for_key(ctx.plan.target_gpu) if planned and ctx.plan.target_gpu else spec_for_name(name, mem)
    evidence = dict(p, planned_for=name if planned else None)
    if spec:
        evidence.update(bandwidth_gbs=spec.bandwidth_gbs, memory_type=spec.memory_type, spec_source=spec.source)
    summary = (f"planning for {name}: " if planned else "") + f"{p['sm']} ({p['architecture']})"
    if lacks:
        summary += f": no {', no '.join(lacks)}"
    if notes:
        summary += "; " + "; ".join(notes)
    warnings, fixes = [], []
    a, force = ctx.adapter, ctx.engine
    if spec and spec.fp16_slow and a.fp16_kernels and not force.assumed:
        warnings.append(f"FP16 runs at 1:64 of FP32 on this card, so {a.label}'s FP16 kernels crawl")
        fixes.append(f"On a P40, expect single-digit tok/s from {a.label} on 27B models; llama.cpp (which can compute in "
                     "FP32) is usually faster on this card.")
    elif spec and spec.fp16_slow:  # an engine that keeps FP16 off its hot path, or none known: a note
        summary += ("; FP16 runs at 1:64 of FP32 here: engines with FP16 kernels (ExLlamaV2, Transformers) crawl, "
                    "llama.cpp's integer kernels do not" if force.assumed else
                    f"; FP16 runs at 1:64 of FP32 here, which {a.label} keeps off its hot path")
        evidence["fp16_slow"] = True
    torch_engine = a.uses_torch or force.assumed
    advice = [f"Use fp16 (not bf16) weights and caches; install packages that still ship {p['sm']} kernels."] \
        if lacks and torch_engine else []
    if not p["triton"] and torch_engine:  # the card's limit for other engines, not a fault of an ExLlamaV2 setup: a note
        summary += f"; {TRITON.compiler} needs cc {TRITON.min_cc}+, so {TRITON.used_by} cannot run here"
        advice.append(TRITON.without_it)
        evidence.update(triton_min_cc=TRITON.min_cc, triton_source=TRITON.source)
    if warnings:
        return CHECK.finding(Status.WARN, summary + "; " + "; ".join(warnings), evidence, " ".join(fixes + advice))
    return CHECK.finding(Status.PASS, summary, evidence, " ".join(advice))


# gpu-present skips when planning for --target-gpu on a machine without a GPU: then this check judges the planned card
CHECK = Check(id=CheckId("compute-capability"), title="Compute capability", run=run, depends_on=(CheckId.GPU_PRESENT,),
              blocked_by=(Status.FAIL, Status.ERROR), order=20, per_gpu=True)
