"""`exllamav2-ready`: exllamav2 importable or buildable here, and whether a 2-3 minute JIT build is coming.

The PyPI wheel is JIT-only: the first `import exllamav2` compiles 47 CUDA/C++ units with torch's
cpp_extension. That needs nvcc of torch's CUDA major version able to target this card, ninja,
and `tokenizers` (required, not declared). A killed build leaves a `lock` file that makes every
later import wait forever. Sources: ../shared/notes/exllamav2-research.md §5 (ext.py, torch's
cpp_extension messages).
"""

from __future__ import annotations

import re

from checks.base import Check, CheckContext
from checks.prescription.machine import machine_prescription
from checks.prescription.probe_install import probe_install_commands
from checks.prescription.quote import route_fix
from doctor.knowledge.engines import JIT_UNITS
from doctor.knowledge.torch_wheels import rocm_of
from doctor.model.findings import Finding, Status
from doctor.model.ids import CheckId
from doctor.model.prescription import Prescription
from doctor.model.unknown import known


def prebuilt_torch_tag(exllamav2_version: str) -> str | None:
    """'0.2.7+cu121.torch2.4.0' -> '2.4.0': the torch a prebuilt wheel was compiled against."""
    m = re.search(r"torch(\d+\.\d+(?:\.\d+)?)", exllamav2_version)
    return m.group(1) if m else None


# torch cannot run on this card or this driver: nothing the probe loads can run
BLOCKING = frozenset({"torch_no_kernel", "driver_too_old_for_torch", "torch_sees_no_gpu"})
TOOLCHAIN = frozenset({"nvcc_missing", "nvcc_cannot_target", "nvcc_major_mismatch", "ninja_missing"})


def _build_kind(torch_version: str) -> str:
    rocm = rocm_of(torch_version)
    return f"a ROCm {rocm} build (for AMD GPUs)" if rocm else "a CPU-only build"


def _route(ctx: CheckContext) -> Prescription | None:
    """The machine's prescription (the same one cuda-pairing quotes), or None without a known card."""
    return machine_prescription(ctx.facts, ctx.plan)


def _jit_problems(rx: Prescription | None) -> tuple[list[str], str, list[str]]:
    """Why a JIT build would fail here: (problems, fix, commands), the commands quoted from the route."""
    if rx is None:
        return [], "", []
    problems = [p.detail for p in rx.problems if p.kind in TOOLCHAIN]
    fix, commands = route_fix(rx) if problems else ("", [])
    return problems, fix, commands


def run(ctx: CheckContext) -> Finding:
    py = ctx.facts.python
    pk = py.packages
    rx = _route(ctx)
    build = py.exllamav2_build
    ev: dict = {"exllamav2": pk.get("exllamav2") if known(pk.get("exllamav2")) else None,
                "tokenizers": pk.get("tokenizers") if known(pk.get("tokenizers")) else None,
                "torch_cuda": py.torch.cuda if known(py.torch.cuda) else None,
                "nvcc": py.nvcc.version if known(py.nvcc.version) else None,
                "ninja": py.nvcc.ninja if known(py.nvcc.ninja) else None}
    a, force = ctx.adapter, ctx.engine
    if not a.uses_exllamav2 and not force.assumed:  # another engine is judged: ExLlamaV2's readiness is not its fault
        return CHECK.finding(Status.SKIP, f"skipped: the engine judged is {a.label} ({force.why}), which does not run "
                             "ExLlamaV2", {"engine": str(force.engine), **({"probe_can_run": False}
                                                                         if not known(pk.get("exllamav2")) else {})})
    if not known(pk.get("exllamav2")):  # not a fault of the machine: the doctor just cannot time it
        return CHECK.finding(Status.INFO, "exllamav2 is not installed here: the timed probe cannot run",
                             {**ev, "probe_can_run": False},
                             "Install it into the Python that runs the doctor to measure, torch first (from the index "
                             "that has this card's kernels), so pip does not pick a torch for it.",
                             probe_install_commands(rx, str(py.torch.version) if py.torch.installed and known(py.torch.version) else None))
    version = str(pk["exllamav2"])
    if not py.torch.installed or not known(py.torch.cuda) or py.torch.cuda == "none":
        return CHECK.finding(Status.FAIL, f"exllamav2 {version} needs torch with CUDA; "
                             + ("torch is not installed" if not py.torch.installed else f"torch is {py.torch.reason or _build_kind(str(py.torch.version))}"),
                             {**ev, "probe_can_run": False}, *(route_fix(rx) if rx and rx.routes else
                                                              ("See cuda-pairing for a torch build that fits this card.", [])))
    no_kernel = [p for p in (rx.problems if rx else ()) if p.kind in BLOCKING]
    if no_kernel:  # nothing can run: the probe would only reproduce the crash
        assert rx is not None  # its problems are the ones found
        fix, commands = route_fix(rx)
        return CHECK.finding(Status.FAIL, f"exllamav2 {version} cannot run here: " + "; ".join(p.detail for p in no_kernel),
                             {**ev, "problems": [p.detail for p in no_kernel], "probe_can_run": False}, fix, commands)
    if not known(pk.get("tokenizers")):
        return CHECK.finding(Status.FAIL, f"exllamav2 {version} needs `tokenizers`, which its wheel does not declare: "
                             "`import exllamav2` fails with \"No module named 'tokenizers'\" (after the JIT build)",
                             {**ev, "probe_can_run": False}, "Install it.", ["pip install tokenizers"])
    if build is None:  # recorded before this fact existed, or unreadable: judge the toolchain as if a build is due
        problems, fix, commands = _jit_problems(rx)
        if problems:
            return CHECK.finding(Status.FAIL, f"exllamav2 {version}: a JIT build here would fail: " + "; ".join(problems),
                                 {**ev, "problems": problems, "probe_can_run": False}, fix, commands)
        return CHECK.finding(Status.PASS, f"exllamav2 {version} is installed and the JIT toolchain is in place (the build "
                             "cache was not recorded: a first import may build for 2-3 minutes)", {**ev, "probe_can_run": True})
    ev.update(build_dir=build.build_dir, cached_build=build.built, prebuilt=build.prebuilt)
    if build.prebuilt:
        tag = prebuilt_torch_tag(version)
        if tag and known(py.torch.version) and not str(py.torch.version).startswith(tag):
            return CHECK.finding(Status.FAIL, f"prebuilt exllamav2 {version} was compiled for torch {tag}, this torch is "
                                 f"{py.torch.version}: the import fails with \"undefined symbol\"",
                                 {**ev, "probe_can_run": False}, "Install the wheel built for this torch, or the JIT wheel from PyPI.",
                                 ["pip install --force-reinstall exllamav2"])
        return CHECK.finding(Status.PASS, f"exllamav2 {version} (prebuilt extension): no JIT build needed",
                             {**ev, "probe_can_run": True})
    if build.lock_age_s is not None:
        ev["lock_age_s"] = round(build.lock_age_s)
        if build.stale_lock:
            return CHECK.finding(Status.FAIL, f"a stale build lock ({build.lock_age_s / 60:.0f} min old) will make "
                                 "`import exllamav2` wait forever", {**ev, "probe_can_run": False},
                                 "A killed JIT build left torch's lock file behind. Delete it (or the whole build folder).",
                                 [f"rm '{build.build_dir}/lock'"])
    if build.built:
        return CHECK.finding(Status.PASS, f"exllamav2 {version} is built for this machine (cached in {build.build_dir}): "
                             "no JIT build on first import", {**ev, "probe_can_run": True})
    problems, fix, commands = _jit_problems(rx)
    if problems:
        return CHECK.finding(Status.FAIL, f"exllamav2 {version} must JIT-build its extension here, and the build would fail: "
                             + "; ".join(problems), {**ev, "problems": problems, "probe_can_run": False},
                             fix + " Or install a prebuilt exllamav2 wheel matching this torch and CUDA.", commands)
    if build.lock_age_s is not None:
        return CHECK.finding(Status.WARN, f"a JIT build of exllamav2 seems to be running now (lock {build.lock_age_s:.0f} s old)",
                             {**ev, "probe_can_run": True})
    return CHECK.finding(Status.PASS, f"exllamav2 {version} is not built yet: the first import JIT-compiles {JIT_UNITS} units "
                         f"(about 2-3 minutes, cached afterwards in {build.root}); the toolchain is in place",
                         {**ev, "probe_can_run": True, "jit_build_pending": True})


CHECK = Check(id=CheckId("exllamav2-ready"), title="ExLlamaV2 ready to probe", run=run, depends_on=(CheckId.GPU_PRESENT,), order=10, per_gpu=True)
