"""`gpu-processes`: other processes holding VRAM (or compute) on the target GPU, with pid, name and MiB.

At rest every process on the GPU competes with the planned deployment (the doctor holds no CUDA
context itself). While watching, the watched pids and their children are "yours"; the rest compete.
"""

from __future__ import annotations

from checks.base import Check, CheckContext
from checks.runtime.context import model_bytes, target_series, value
from doctor.model.facts import GpuFacts
from doctor.model.findings import Finding, Status
from doctor.model.ids import CheckId
from doctor.model.sample_summary import summarize_gpu
from doctor.model.samples import GpuSeries
from doctor.model.units import gb

NOTABLE_MIB = 1024.0  # another process holding this much is worth a warning
NOTABLE_SHARE = 0.05  # ... or this share of the card


# nvitop's maintainer: under WDDM (which WSL2 uses) "the NVML cannot report per-process" GPU use
WSL_SOURCE = "https://github.com/XuehaiPan/nvitop/issues/55 ; https://github.com/microsoft/WSL/issues/7162"


def free_text_of(evidence: dict, total: float | None) -> str:
    """"; N of M MiB free", or "" when either number is unknown (a replayed report whose numbers became unknown):
    a sentence never ends on a dangling "; "."""
    free = evidence["memory_free_mib"]
    return f"; {free:,.0f} of {total:,.0f} MiB free" if free is not None and total is not None else ""


def _from_samples(g: GpuSeries, gpu: GpuFacts | None) -> tuple[dict[int, dict], float | None, float | None]:
    """pid -> {name, mib} over the window, the most memory used, the card's total."""
    s = summarize_gpu(g)
    names = dict(g.process_names)
    if gpu is not None and isinstance(gpu.processes, tuple):
        names.update({str(p.pid): p.name for p in gpu.processes if isinstance(p.name, str)})
    procs = {int(pid): {"name": names.get(pid), "mib": mib} for pid, mib in s.process_max_mib.items()}
    for sample in g.samples:  # processes NVML listed without a memory figure
        for p in sample.processes or ():
            procs.setdefault(p.pid, {"name": names.get(str(p.pid)), "mib": None})
    total = g.memory_total_mib or (value(gpu.memory_total_mib) if gpu else None)
    return procs, s.memory_used_max_mib, total


def _from_snapshot(gpu: GpuFacts) -> tuple[dict[int, dict] | None, float | None, float | None]:
    if not isinstance(gpu.processes, tuple):
        return None, value(gpu.memory_used_mib), value(gpu.memory_total_mib)
    procs = {p.pid: {"name": value(p.name), "mib": value(p.used_mib)} for p in gpu.processes}
    return procs, value(gpu.memory_used_mib), value(gpu.memory_total_mib)


def _describe(pid: int, info: dict) -> str:
    mib = f"{info['mib']:,.0f} MiB" if info["mib"] is not None else "memory not reported"
    return f"pid {pid} ({info['name'] or 'name not visible here'}, {mib})"


def run(ctx: CheckContext) -> Finding:
    gpu = ctx.target_gpu()
    g = target_series(ctx)
    series = ctx.facts.samples
    watched = set(series.watched_pids) if series is not None else set()
    procs: dict[int, dict] | None  # None: NVML did not list the processes
    if g is not None:
        procs, used, total = _from_samples(g, gpu)
        measured = f"over {g.samples[-1].t_s - g.samples[0].t_s:.0f} s of samples"
    elif gpu is not None:
        procs, used, total = _from_snapshot(gpu)
        measured = "at rest (one NVML snapshot)"
    else:
        return CHECK.finding(Status.SKIP, f"no facts for GPU {ctx.plan.gpu_index}", {})
    evidence: dict = {"measured": measured, "memory_total_mib": total, "memory_used_max_mib": used,
                      "memory_free_mib": round(total - used, 1) if total is not None and used is not None else None}
    wsl = ctx.facts.host.wsl is True
    if wsl and not procs:
        evidence.update(wsl=True, processes="not listed: WSL2's driver reports no per-process GPU use", source=WSL_SOURCE)
        return CHECK.finding(Status.INFO, f"WSL2: the driver never lists per-process GPU use here, so "
                             f"{used or 0:,.0f} MiB in use with no process listed is normal{free_text_of(evidence, total)}"
                             " (Windows' Task Manager shows the totals only)", evidence)
    if procs is None:
        reason = gpu.processes.reason if gpu is not None and hasattr(gpu.processes, "reason") else "not reported"
        evidence["processes"] = f"not listed: {reason}"
        if used is not None and used >= NOTABLE_MIB:
            return CHECK.finding(Status.WARN, f"{used:,.0f} MiB of {total:,.0f} MiB are in use, but NVML does not say by "
                                 f"whom ({reason})", evidence, "List the processes as root, or on the host if this "
                                 "runs in a container.", ["sudo nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv"])
        return CHECK.finding(Status.SKIP, f"NVML does not list the processes on this GPU ({reason})", evidence)
    yours = {pid: p for pid, p in procs.items() if pid in watched}
    others = {pid: p for pid, p in procs.items() if pid not in watched}
    evidence["watched_pids"] = sorted(watched)
    evidence["yours"] = [_describe(pid, p) for pid, p in sorted(yours.items())]
    evidence["others"] = [_describe(pid, p) for pid, p in sorted(others.items())]
    if watched and procs and not yours and all(p["name"] is None for p in others.values()):
        evidence["note"] = ("none of the listed pids is visible to this process: NVML reports host pids, so this "
                            "probably runs in a container with its own pid namespace and yours cannot be told apart")
    others_mib = sum(p["mib"] or 0.0 for p in others.values())
    evidence["others_mib"] = round(others_mib, 1)
    free_text = free_text_of(evidence, total)
    if not others:
        who = f"only yours: {', '.join(evidence['yours'])}" if yours else "no process holds this GPU"
        return CHECK.finding(Status.PASS, f"No other process on GPU {ctx.plan.gpu_index} ({who}){free_text}", evidence)
    listing = ", ".join(evidence["others"])
    notable = others_mib >= NOTABLE_MIB or (total and others_mib >= NOTABLE_SHARE * total)
    if not watched and g is not None and len(others) == 1:
        return CHECK.finding(Status.PASS, f"One process uses GPU {ctx.plan.gpu_index}: {listing}{free_text} "
                             "(give --pid to mark it as yours)", evidence)
    mb, _ = model_bytes(ctx)
    fix = ("Stop or move the other processes before loading the model (check what they are first: a forgotten "
           "notebook kernel or an old server is common), or pin them to another GPU with CUDA_VISIBLE_DEVICES.")
    commands = ["nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv",
                *[f"ps -o pid,user,etime,cmd -p {pid}" for pid in sorted(others)[:3]]]
    if mb is not None and total is not None:
        room = (total - others_mib) * 1024**2
        evidence["model_gpu_bytes"] = mb.gpu_bytes
        if room < mb.gpu_bytes:
            return CHECK.finding(Status.FAIL, f"Other processes hold {others_mib:,.0f} MiB on GPU {ctx.plan.gpu_index} "
                                 f"({listing}): the model's {gb(mb.gpu_bytes)} of weights no longer fit in the "
                                 f"{gb(room)} left", evidence, fix, commands)
    if notable:
        return CHECK.finding(Status.WARN, f"Other processes hold {others_mib:,.0f} MiB on GPU {ctx.plan.gpu_index}: "
                             f"{listing}{free_text}", evidence, fix, commands)
    return CHECK.finding(Status.PASS, f"Only small other users of GPU {ctx.plan.gpu_index}: {listing}{free_text}",
                         evidence)


CHECK = Check(id=CheckId("gpu-processes"), title="Other processes on the GPU", run=run, depends_on=(CheckId.GPU_PRESENT,), order=30, per_gpu=True)
