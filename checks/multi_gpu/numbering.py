"""`gpu-numbering`: NVML's numbers (nvidia-smi, --gpu) beside CUDA's (gpu_split, TabbyAPI), warned when they differ and matter."""

from __future__ import annotations

from checks.base import Check, CheckContext
from checks.env.cuda_visibility import show_cards_fix
from doctor.knowledge.arithmetic.gpu_numbering import CUDA_ENV_DOC, cuda_numbering
from doctor.model.findings import Finding, Status
from doctor.model.ids import CheckId
from doctor.model.unknown import known, show


def _plan_depends_on_order(ctx: CheckContext) -> str | None:
    if ctx.plan.gpu_split and len(ctx.plan.gpu_split) > 1:
        return f"--gpu-split {','.join(f'{x:g}' for x in ctx.plan.gpu_split)} is read in CUDA order"
    if ctx.plan.tensor_parallel:
        return "tensor parallelism places shards in CUDA order"
    return None


def run(ctx: CheckContext) -> Finding:
    gpus = ctx.facts.nvml.gpus
    torch = ctx.facts.python.torch
    torch_ccs = torch.device_capabilities if known(torch.device_capabilities) else None
    n = cuda_numbering(gpus, ctx.facts.python.env, torch_ccs)
    names = {g.index: show(g.name) for g in gpus}
    table = [f"CUDA {d.cuda_index} = NVML {d.nvml_index} {names[d.nvml_index]}" + (f" (MIG {d.mig})" if d.mig else "")
             for d in n.devices]
    hidden = [f"NVML {g.index} {names[g.index]}" for g in gpus if n.cuda_index_of(g.index) is None]
    mig_cards = [g for g in gpus if g.mig_mode == "enabled"]
    evidence = {"cuda_device_order": n.order, "cuda_visible_devices": n.visible, "cuda_order": table,
                "hidden_from_cuda": hidden, "order_source": "modelled (CUDA's FASTEST_FIRST heuristic is undocumented)"
                if n.modelled else "confirmed by torch's device list", "flags": "--gpu and nvidia-smi -i use NVML "
                "numbers; --gpu-split, ExLlamaV2's gpu_split and TabbyAPI's gpu_split use CUDA numbers", "source": CUDA_ENV_DOC}
    summary = "; ".join(table) + (f"; hidden from CUDA: {', '.join(hidden)}" if hidden else "")
    fix_lines = ["export CUDA_DEVICE_ORDER=PCI_BUS_ID   # CUDA numbers GPUs as nvidia-smi does"]
    if n.problems:
        return CHECK.finding(Status.WARN, f"{n.problems[0]}: {summary}", evidence,
                             "Fix CUDA_VISIBLE_DEVICES: list indices or GPU-/MIG- UUIDs from `nvidia-smi -L`.", ["nvidia-smi -L"])
    wanted = len(ctx.plan.gpu_split) if ctx.plan.gpu_split else 0
    if hidden and n.visible is not None and wanted > len(n.devices):
        hidden_idx = tuple(g.index for g in gpus if n.cuda_index_of(g.index) is None)
        fix, commands = show_cards_fix(tuple(d.nvml_index for d in n.devices) + hidden_idx, ctx.facts)
        what = f"--gpu-split {','.join(f'{x:g}' for x in ctx.plan.gpu_split or ())}"
        return CHECK.finding(Status.FAIL, f"{what} plans {wanted} GPUs, but CUDA_VISIBLE_DEVICES={n.visible!r} leaves CUDA "
                             f"{len(n.devices)}: the split would put layers on {', '.join(hidden)}, which no CUDA program "
                             f"here can use; {summary}", evidence, fix, commands)
    if mig_cards:
        listed = ", ".join(f"NVML {g.index} {names[g.index]}" for g in mig_cards)
        evidence["mig_cards"] = listed
        return CHECK.finding(Status.WARN, f"MIG is enabled on {listed}: CUDA sees only its MIG slices, a process uses "
                             f"one slice, and ExLlamaV2 cannot split a model over a slice and other GPUs; {summary}", evidence,
                             "Leave the MIG card out of the split (CUDA_VISIBLE_DEVICES with the other GPUs' UUIDs), or "
                             "turn MIG off on it if it should take a share.",
                             ["nvidia-smi -L", f"sudo nvidia-smi -i {mig_cards[0].index} -mig 0   # then reset the GPU or reboot"])
    depends = _plan_depends_on_order(ctx)
    if n.differs and depends:
        fix = ("CUDA_VISIBLE_DEVICES renumbers the GPUs in the order it lists them: write gpu_split in that order "
               "(CUDA 0 first), or list the GPUs in nvidia-smi's order." if n.visible is not None else
               "Set CUDA_DEVICE_ORDER=PCI_BUS_ID for the server (and this doctor) so both numberings agree, then "
               "write gpu_split in nvidia-smi's order.")
        return CHECK.finding(Status.WARN, f"CUDA numbers these GPUs differently from nvidia-smi and {depends}: {summary}",
                             evidence, fix, fix_lines if n.visible is None else ["nvidia-smi -L"])
    if n.differs:
        return CHECK.finding(Status.INFO, f"CUDA numbers these GPUs differently from nvidia-smi (no split planned, so "
                             f"nothing depends on it yet): {summary}", evidence)
    return CHECK.finding(Status.PASS, f"CUDA and NVML number the GPUs alike: {summary}", evidence)


CHECK = Check(id=CheckId("gpu-numbering"), title="GPU numbering (NVML vs CUDA)", run=run, depends_on=(CheckId.GPU_PRESENT,), order=10)
