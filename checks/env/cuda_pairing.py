"""`cuda-pairing`: driver <-> torch CUDA build, kernels for this card in the torch wheel, nvcc for JIT builds."""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

from checks.base import Check, CheckContext
from checks.env.jit_toolchain import nvcc_problems, toolkit_commands
from checks.env.torch_choice import choose_torch, driver_runs_cuda, wheel_has_kernel
from checks.knowledge.cuda import DRIVER_BRANCHES
from checks.knowledge.torch_wheels import arch_list_to_ccs, lookup
from doctor.model.findings import Finding, Status
from doctor.model.unknown import known


def _torch_minor(version: str) -> str | None:
    try:
        v = Version(version)
    except InvalidVersion:
        return None
    return f"{v.major}.{v.minor}"


def _arch_list(torch) -> tuple[tuple[str, ...], tuple[str, ...], str] | None:
    """The wheel's cubins and PTX: measured from torch if we have it, else the knowledge base (said so)."""
    if known(torch.arch_list) and torch.arch_list:
        cubins, ptx = arch_list_to_ccs(torch.arch_list)
        return cubins, ptx, "torch.cuda.get_arch_list()"
    minor = _torch_minor(torch.version) if known(torch.version) else None
    row = lookup(minor, torch.cuda) if minor and known(torch.cuda) else None
    if row:
        return row.archs, row.ptx, f"knowledge base (not measured here): {row.source}"
    return None


def _driver_branch_problem(cc: str, driver: str) -> str | None:
    try:
        branch = int(driver.split(".")[0])
    except ValueError:
        return None
    for b in DRIVER_BRANCHES:
        if any(cc.startswith(p) for p in b.cc_prefixes) and b.last_branch and branch > b.last_branch:
            return (f"driver {driver} (R{branch}) no longer supports {b.architecture} (cc {cc}); "
                    f"R{b.last_branch} is the last branch for it")
    return None


def run(ctx: CheckContext) -> Finding:
    gpu = ctx.target_gpu()
    cc = gpu.compute_capability if gpu else None
    if not known(cc):
        return CHECK.finding(Status.SKIP, "skipped: the card's compute capability is unknown")
    nvml, torch, nvcc = ctx.facts.nvml, ctx.facts.python.torch, ctx.facts.python.nvcc
    driver = nvml.driver_version if known(nvml.driver_version) else None
    nvcc_major = int(nvcc.version.split(".")[0]) if known(nvcc.version) else None
    choices = choose_torch(cc, driver, nvcc_major)
    best = choices[0] if choices else None
    ev: dict = {"cc": cc, "driver_version": driver, "driver_cuda": nvml.cuda_driver_version if known(nvml.cuda_driver_version) else None,
                "torch_version": torch.version if known(torch.version) else None,
                "torch_cuda": torch.cuda if known(torch.cuda) else None,
                "nvcc_version": nvcc.version if known(nvcc.version) else None}
    if best:
        ev["recommended_torch"] = f"{best.row.torch} cu{best.row.cuda.replace('.', '')}"
    fails, warns = [], []
    commands: list[str] = []

    if driver and (problem := _driver_branch_problem(cc, driver)):
        fails.append(problem)
        commands.append("# install an R580 (or older) data-center driver for this card, e.g. 580.95.05")

    if not torch.installed:
        warns.append("torch is not installed, so no CUDA build can be checked")
    elif not known(torch.version):
        fails.append(f"torch is installed but broken: {torch.reason}")
    elif torch.cuda == "none":
        fails.append(f"torch {torch.version} is a CPU-only build: it cannot use the GPU at all")
    else:
        archs = _arch_list(torch)
        if archs is None:
            warns.append(f"torch {torch.version}: its arch list is not known here, so kernel support for sm_{cc.replace('.', '')} is unverified")
        else:
            cubins, ptx, how = archs
            ev.update(torch_cubins=list(cubins), torch_ptx=list(ptx), arch_list_from=how)
            kind = wheel_has_kernel(cubins, ptx, cc)
            if kind is None:
                fails.append(f"torch {torch.version} has no kernel for sm_{cc.replace('.', '')} (it ships {', '.join('sm_' + c.replace('.', '') for c in cubins)}): "
                             "every CUDA op fails with \"no kernel image is available for execution on the device\"")
            elif kind == "ptx":
                warns.append(f"torch {torch.version} has only PTX for this card: kernels are JIT-compiled at start-up (slow first run, needs the toolkit driver)")
        if driver and known(torch.cuda):
            mode = driver_runs_cuda(driver, torch.cuda)
            ev["driver_runs_torch_cuda"] = mode or "no"
            if mode is None:
                fails.append(f"driver {driver} is too old for torch's CUDA {torch.cuda}: torch reports \"The NVIDIA driver on your system is too old\"")
            elif mode == "mvc":
                ev["note"] = f"CUDA {torch.cuda} runs on driver {driver} through minor-version compatibility (no PTX JIT of newer code)"
    warns += nvcc_problems(cc, nvcc.version, torch.cuda)
    if torch.warnings:
        ev["torch_warnings"] = list(torch.warnings)

    if best and (fails or any("torch" in w for w in warns)):
        commands.append(best.command)
    if any("nvcc" in w for w in warns):
        commands += toolkit_commands(cc, best.row.cuda if best and fails else torch.cuda)
    fix = ""
    if best:
        fix = (f"A torch that fits this card and driver: torch {best.row.torch} with CUDA {best.row.cuda} "
               f"({'runs on this driver' if best.driver_mode == 'toolkit' else 'runs on this driver via minor-version compatibility'}; "
               f"its wheel ships sm_{'/'.join(a.replace('.', '') for a in best.row.archs)}; source: {best.row.source}).")
        others = [f"{c.row.torch}+cu{c.row.cuda.replace('.', '')}" for c in choices[1:4]]
        if others:
            fix += f" Also fine: {', '.join(others)}."
    if fails or warns:
        ev["problems"] = fails + warns
    if fails:
        also = f"; also: {'; '.join(warns)}" if warns else ""
        return CHECK.finding(Status.FAIL, "; ".join(fails) + also, ev, fix, commands)
    if warns:
        return CHECK.finding(Status.WARN, "; ".join(warns), ev, fix, commands)
    summary = f"torch {torch.version} (CUDA {torch.cuda}) has kernels for sm_{cc.replace('.', '')} and runs on driver {driver}"
    return CHECK.finding(Status.PASS, summary, ev)


CHECK = Check(id="cuda-pairing", title="Driver, CUDA and PyTorch pairing", run=run, depends_on=("gpu-present",))
