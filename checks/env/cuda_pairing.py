"""`cuda-pairing`: driver <-> torch CUDA build, kernels for this card in the torch wheel, nvcc for JIT builds.

Decisions come from the structured problems in checks/prescription/problems.py, and the fix quotes
the machine's one route (checks/prescription/route.py), the same one `exllamav2-ready` quotes.
"""

from __future__ import annotations

from checks.base import Check, CheckContext
from checks.prescription.compat import driver_runs_cuda
from checks.prescription.forward_compat import forward_compat
from checks.prescription.machine import engine_needs, machine_prescription
from checks.prescription.problems import last_branch, stack_of, torch_archs
from checks.prescription.quote import route_fix
from checks.prescription.target import plan_sentence
from doctor.model.findings import Finding, Status
from doctor.model.ids import CheckId
from doctor.model.prescription import Prescription
from doctor.model.unknown import known

TORCH_ENGINES = "ExLlamaV2, Transformers and vLLM"

FAILS = frozenset({"driver_too_new_for_card", "driver_too_old_for_engine", "torch_broken",
                   "torch_cpu_only", "torch_rocm", "torch_no_kernel", "driver_too_old_for_torch",
                   "torch_sees_no_gpu"})
WARNS = frozenset({"torch_missing", "torch_ptx_only", "torch_arch_unknown", "nvcc_cannot_target", "nvcc_major_mismatch"})


def run(ctx: CheckContext) -> Finding:
    card = ctx.card()
    rx = machine_prescription(ctx.facts, ctx.plan) if card else None  # the route for the judged card
    if card is None or rx is None:
        return CHECK.finding(Status.SKIP, "skipped: the card's compute capability is unknown")
    cc, name, planned = card
    if planned and "torch" not in ctx.adapter.cuda_stack:  # llama.cpp / Ollama planned for a card: no torch to plan
        last = last_branch(cc)
        return CHECK.finding(Status.INFO, f"planning for {name}: {ctx.adapter.label} needs no torch; a driver that drives "
                             f"cc {cc}" + (f" (R{last} is the last branch for it)" if last else "") + " and a build with "
                             f"code for sm_{cc.replace('.', '')} (engine-build judges it on the target)",
                             {"cc": cc, "planning_target": ctx.plan.target_gpu, "engine": str(ctx.engine.engine)})
    if planned:  # --target-gpu: what the target will need, as a plan; this machine's stack is not judged
        return CHECK.finding(Status.INFO, f"planning for {name}: {plan_sentence(rx)}",
                             {"cc": cc, "planning_target": ctx.plan.target_gpu,
                              "plan": [s.action for r in rx.routes for s in r.steps]})
    nvml, torch = ctx.facts.nvml, ctx.facts.python.torch
    stack = stack_of(ctx.facts, cc, name)
    if "torch" not in engine_needs(ctx, cc, name).parts:
        return driver_only(ctx, rx, cc, name, stack.driver)
    ev: dict = {"cc": cc, "driver_version": stack.driver,
                "driver_cuda": nvml.cuda_driver_version if known(nvml.cuda_driver_version) else None,
                "torch_version": torch.version if known(torch.version) else None,
                "torch_cuda": torch.cuda if known(torch.cuda) else None,
                "nvcc_version": stack.nvcc_version}
    if torch.installed and known(torch.version) and torch.cuda != "none" and (archs := torch_archs(torch)):
        ev.update(torch_cubins=list(archs[0]), torch_ptx=list(archs[1]), arch_list_from=archs[2])
    if stack.driver and stack.torch_cuda:
        mode = driver_runs_cuda(stack.driver, stack.torch_cuda)
        ev["driver_runs_torch_cuda"] = mode or "no"
        if mode == "mvc":
            ev["note"] = f"CUDA {stack.torch_cuda} runs on driver {stack.driver} through minor-version compatibility (no PTX JIT of newer code)"
    fc = forward_compat(ctx.facts, name)
    if fc:
        ev.update(fc.evidence())
    torch_step = next((s for r in rx.routes[:1] for s in r.steps if s.kind == "torch"), None)
    if torch_step:
        ev["recommended_torch"] = torch_step.changes.split(" -> ", 1)[1].split(" ")[0]
    if torch.warnings:
        ev["torch_warnings"] = list(torch.warnings)
    fails = [p.detail for p in rx.problems if p.kind in FAILS]
    warns = [p.detail for p in rx.problems if p.kind in WARNS]
    if fails or warns:
        ev["problems"] = fails + warns
        ev["problem_kinds"] = [p.kind for p in rx.problems if p.kind in FAILS | WARNS]
        ev["routes"] = [r.name for r in rx.routes]
    fix, commands = route_fix(rx)
    if not rx.routes and any(p.kind == "torch_sees_no_gpu" for p in rx.problems):
        fix, commands = ("torch initialised CUDA and found no device: read its warning above; check CUDA_VISIBLE_DEVICES "
                         "and NVIDIA_VISIBLE_DEVICES (a container needs the NVIDIA runtime, `docker run --gpus all`) and "
                         "that `nvidia-smi` works in the same shell.", ["nvidia-smi -L", "env | grep -i visible_devices"])
    if fails:
        also = f"; also: {'; '.join(warns)}" if warns else ""
        return CHECK.finding(Status.FAIL, "; ".join(fails) + also, ev, fix, commands)
    if warns:
        return CHECK.finding(Status.WARN, "; ".join(warns), ev, fix, commands)
    summary = f"torch {torch.version} (CUDA {torch.cuda}) has kernels for sm_{cc.replace('.', '')} and runs on driver {stack.driver}"
    if fc and fc.torch_ran:
        summary += f", with {fc.describe()}: torch initialised CUDA, so the older kernel driver is not a fault here"
    return CHECK.finding(Status.PASS, summary, ev)


def driver_only(ctx: CheckContext, rx: Prescription, cc: str, name: str, driver: str | None) -> Finding:
    """An engine that does not run on PyTorch (llama.cpp, Ollama), or no engine known and no torch: only the driver is
    judged, against the card and against the driver the engine's own CUDA runtime needs."""
    a, force = ctx.adapter, ctx.engine
    floor = a.driver_floor(cc, ctx.facts)
    ev: dict = {"cc": cc, "driver_version": driver, "engine": str(force.engine), "engine_assumed": force.assumed,
                "torch_judged": False}
    if floor is not None:
        ev.update(engine_driver_floor=f"R{floor.branch}", engine_driver_floor_source=floor.source)
    fails = [p.detail for p in rx.problems if p.kind in FAILS]
    if fails:
        ev["problem_kinds"] = [p.kind for p in rx.problems if p.kind in FAILS]
        fix, commands = route_fix(rx)
        return CHECK.finding(Status.FAIL, "; ".join(fails), ev, fix, commands)
    needs = f", which {a.label} needs (R{floor.branch}+)" if floor is not None else ""
    drives = f"driver {driver} drives {name} (cc {cc}){needs}" if driver else f"the driver version of {name} is unknown"
    if force.assumed:
        return CHECK.finding(Status.INFO, f"{drives}; torch is not installed: llama.cpp and Ollama need none, while "
                             f"{TORCH_ENGINES} need a CUDA build of torch with sm_{cc.replace('.', '')} kernels (no engine "
                             "named or found: give --engine to judge one)", ev)
    return CHECK.finding(Status.PASS, f"{drives}; {a.label} does not run on PyTorch, so torch's CUDA build is not "
                         "judged for it", ev)


CHECK = Check(id=CheckId("cuda-pairing"), title="Driver, CUDA and PyTorch pairing", run=run, depends_on=(CheckId.GPU_PRESENT,),
              blocked_by=(Status.FAIL, Status.ERROR), order=30, per_gpu=True)  # gpu-present skips only when planning for --target-gpu
