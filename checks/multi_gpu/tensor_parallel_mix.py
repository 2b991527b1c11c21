"""`tensor-parallel-mix`: tensor parallelism planned over GPUs of different memory sizes.

Tensor parallelism cuts every layer, and the KV cache with it, into equal shares, one per GPU, so the card with the
least memory sets the budget of all of them: vLLM sizes its cache on every worker and "takes the min of the results"
(its distributed executor). A layer split (ExLlamaV2's gpu_split, llama.cpp's --tensor-split) sizes each card's
share instead.
"""

from __future__ import annotations

from checks.base import Check, CheckContext
from doctor.model.findings import Finding, Status
from doctor.model.ids import CheckId
from doctor.model.unknown import known

SOURCE = "https://github.com/vllm-project/vllm/blob/v0.4.0/vllm/executor/distributed_gpu_executor.py"  # S


def run(ctx: CheckContext) -> Finding:
    if not ctx.plan.tensor_parallel:
        return CHECK.finding(Status.PASS, "no tensor parallelism planned: a layer split gives each GPU its own share")
    gpus = [g for g in ctx.facts.nvml.gpus if ctx.plan.gpu_indices is None or g.index in ctx.plan.gpu_indices]
    unread = [g.index for g in gpus if not known(g.memory_total_mib)]
    if unread:
        return CHECK.finding(Status.SKIP, f"NVML did not report the memory of GPU {', '.join(map(str, unread))}")
    gib = {g.index: float(g.memory_total_mib) / 1024 for g in gpus}  # type: ignore[arg-type]  # known() above
    smallest = min(gib, key=lambda i: gib[i])
    usable, total = len(gib) * gib[smallest], sum(gib.values())
    evidence = {"memory_gib": {str(i): round(m, 1) for i, m in gib.items()}, "usable_gib": round(usable, 1),
                "total_gib": round(total, 1), "source": SOURCE}
    if usable >= 0.98 * total:
        return CHECK.finding(Status.PASS, f"{len(gib)} GPUs of {gib[smallest]:.0f} GiB: equal shares fit every card", evidence)
    return CHECK.finding(
        Status.WARN, f"tensor parallelism over GPUs of {', '.join(f'{m:.0f}' for m in gib.values())} GiB gives each an "
        f"equal share, so GPU {smallest} ({gib[smallest]:.0f} GiB) sets the budget: {usable:.0f} GiB usable of "
        f"{total:.0f} GiB", evidence,
        "Run tensor parallelism over GPUs of one size (list only those in CUDA_VISIBLE_DEVICES), or use a layer "
        "split, which sizes each card's share: ExLlamaV2's gpu_split, llama.cpp's --split-mode layer --tensor-split.")


CHECK = Check(id=CheckId("tensor-parallel-mix"), title="Tensor parallelism over GPUs of one size", run=run,
              depends_on=(CheckId.GPU_PRESENT,), order=30)
