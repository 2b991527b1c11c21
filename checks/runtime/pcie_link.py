"""`pcie-link`: the GPU's PCIe link below its maximum generation or width, and what that costs.

An idle GPU drops its link to a lower generation to save power and trains back up under load
("These may be reduced when the GPU is not in use": nvidia-smi --help-query-gpu, pcie.link.gen.current), so
a low generation at rest with the idle reason is normal; a narrow width never is (slot, riser or
BIOS). Decode with all weights in VRAM barely uses PCIe; loading the model and any offload do.
"""

from __future__ import annotations

from checks.base import Check, CheckContext
from checks.runtime.context import model_bytes, target_summary, value
from doctor.knowledge import pcie
from doctor.model.findings import Finding, Status
from doctor.model.ids import CheckId
from doctor.model.units import gb

REFERENCE_BYTES = 10e9  # cost examples use the model's GPU bytes, or "per 10 GB" without a model


def _costs(gen: int, width: int, gen_max: int, width_max: int, weights: float | None) -> dict:
    now, best = pcie.practical_gbs(gen, width), pcie.practical_gbs(gen_max, width_max)
    size = weights or REFERENCE_BYTES
    out = {"link_now_gbs_est": now, "link_max_gbs_est": best, "bandwidth_ratio": round(now / best, 3) if now and best else None,
           "bandwidth_source": f"{pcie.SOURCE} x {pcie.PRACTICAL_FRACTION} usable (estimate)"}
    if now and best:
        label = "model" if weights else "10 GB"
        out[f"load_{label.replace(' ', '')}_s_now_est"] = round(size / (now * 1e9), 1)
        out[f"load_{label.replace(' ', '')}_s_at_max_est"] = round(size / (best * 1e9), 1)
        out["offload_tok_s_per_gb_now_est"] = round(now, 1)  # 1 GB streamed per token
        out["offload_tok_s_per_gb_at_max_est"] = round(best, 1)
    return out


def run(ctx: CheckContext) -> Finding:
    gpu = ctx.target_gpu()
    loaded = target_summary(ctx)
    gen_max = value(gpu.pcie_gen_max) if gpu else None
    width_max = value(gpu.pcie_width_max) if gpu else None
    busy = None
    if loaded is not None:
        g, busy = loaded
        gen_max, width_max = g.pcie_gen_max or gen_max, g.pcie_width_max or width_max
    if gpu is None and loaded is None:
        return CHECK.finding(Status.SKIP, f"no facts for GPU {ctx.plan.gpu_index}", {})
    gen: int | None
    width: int | None
    if busy is not None and busy.busy_samples > 0 and busy.pcie_gen_busy_min is not None:  # measured under load
        gen, width = busy.pcie_gen_busy_min, busy.pcie_width_busy_min
        when = f"while busy ({busy.busy_samples} samples)"
        idle = False
    else:
        gen, width = value(gpu.pcie_gen) if gpu else None, value(gpu.pcie_width) if gpu else None
        reasons = value(gpu.clocks_event_reasons) if gpu else None
        idle = bool(reasons and "gpu_idle" in reasons)
        when = "at rest" + (" (GPU idle)" if idle else "")
    if gen is None or width is None or gen_max is None or width_max is None:
        return CHECK.finding(Status.SKIP, "NVML did not report the PCIe link generation and width for this GPU",
                             {"gen": gen, "width": width, "gen_max": gen_max, "width_max": width_max})
    mb, _ = model_bytes(ctx)
    weights = float(mb.gpu_bytes) if mb else None
    evidence = {"measured": when, "gen": gen, "gen_max": gen_max, "width": width, "width_max": width_max,
                **_costs(gen, width, gen_max, width_max, weights)}
    link = f"PCIe gen{gen} x{width} (max gen{gen_max} x{width_max})"
    problems = []
    if width < width_max:
        problems.append(f"the link runs at x{width} of x{width_max} lanes")
    if gen < gen_max and not idle:
        problems.append(f"the link runs at gen{gen}, below gen{gen_max}, while the GPU works")
    if not problems:
        note = (f"; gen{gen} now because the idle GPU saves power, it trains up to gen{gen_max} under load"
                if gen < gen_max else "")
        return CHECK.finding(Status.PASS, f"{link} {when}{note}", evidence)
    load_now = evidence.get("load_model_s_now_est") or evidence.get("load_10GB_s_now_est")
    load_max = evidence.get("load_model_s_at_max_est") or evidence.get("load_10GB_s_at_max_est")
    what = f"{gb(weights)} model" if weights else "10 GB of weights"
    cost = (f"loading a {what} takes ≥{load_now} s instead of ≥{load_max} s (estimate), and each GB offloaded per token "
            f"caps decode at {evidence['offload_tok_s_per_gb_now_est']} tok/s instead of {evidence['offload_tok_s_per_gb_at_max_est']}")
    fix = ("Seat the card in a full x16 slot wired to the CPU (not a chipset or x8 slot), check risers and the BIOS "
           "PCIe settings (link speed 'Auto' or the card's generation, bifurcation off for this slot). With every "
           "weight in VRAM, decode speed does not depend on the link; loading and any offload do.")
    return CHECK.finding(Status.WARN, f"{link} {when}: {'; '.join(problems)}. {cost}", evidence, fix,
                         [f"nvidia-smi -i {ctx.plan.gpu_index} --query-gpu=pcie.link.gen.current,pcie.link.gen.max,"
                          "pcie.link.width.current,pcie.link.width.max --format=csv   # while it generates",
                          "sudo lspci -vv | grep -E 'LnkCap|LnkSta'   # what the slot itself offers"])


CHECK = Check(id=CheckId("pcie-link"), title="PCIe link generation and width", run=run, depends_on=(CheckId.GPU_PRESENT,), order=40, per_gpu=True)
