"""The structured problems of the CUDA stack, decided on facts (never on message text).

`cuda-pairing`, `exllamav2-ready` and the route all read these, so they cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from checks.prescription.compat import driver_runs_cuda, major, wheel_has_kernel
from checks.prescription.forward_compat import forward_compat, runs_through_compat
from doctor.engines.base import DriverFloor
from doctor.knowledge.attention import cc_at_least
from doctor.knowledge.cuda import DRIVER_BRANCHES, NVCC_ARCHS
from doctor.knowledge.torch_wheels import arch_list_to_ccs, lookup, rocm_of
from doctor.model.facts import Facts, TorchFacts
from doctor.model.prescription import Problem
from doctor.model.unknown import known

# kind -> subject (what must change to clear it)
KINDS = {
    "driver_too_new_for_card": "driver", "driver_too_old_for_torch": "driver", "driver_too_old_for_engine": "driver",
    "torch_missing": "torch", "torch_broken": "torch", "torch_cpu_only": "torch", "torch_rocm": "torch",
    "torch_no_kernel": "torch", "torch_ptx_only": "torch", "torch_arch_unknown": "torch",
    "torch_sees_no_gpu": "environment",
    "nvcc_cannot_target": "nvcc", "nvcc_major_mismatch": "nvcc", "nvcc_missing": "nvcc", "ninja_missing": "build",
}
TORCH_KINDS = frozenset(k for k, s in KINDS.items() if s == "torch") - {"torch_arch_unknown"}


@dataclass(frozen=True)
class Stack:
    """The machine's CUDA stack as the route sees it."""

    cc: str
    card: str
    driver: str | None
    torch_version: str | None  # "2.11.0+cu130"
    torch_cuda: str | None  # "13.0"; None when torch is missing, broken or CPU-only
    nvcc_version: str | None
    packages: dict
    jit_build_due: bool  # exllamav2 is installed and will JIT-build (not prebuilt, not built yet)

    @property
    def torch_release(self) -> tuple[int, int, int | None] | None:
        """(2, 11, 0) from '2.11.0+cu130'."""
        try:
            v = Version(self.torch_version or "")
        except InvalidVersion:
            return None
        return v.major, v.minor, v.micro if len(v.release) > 2 else None

    @property
    def nvcc_major(self) -> int | None:
        return major(self.nvcc_version) if self.nvcc_version else None


def driver_branch(driver: str | None) -> int | None:
    try:
        return int(str(driver).split(".")[0])
    except ValueError:
        return None


def last_branch(cc: str) -> int | None:
    """The last driver branch that drives this card (R580 for Maxwell/Pascal/Volta), None when still current."""
    b = next((b for b in DRIVER_BRANCHES if any(cc.startswith(p) for p in b.cc_prefixes)), None)
    return b.last_branch if b else None


def nvcc_targets(nvcc_major: int | None, cc: str) -> bool:
    rng = next((r for r in NVCC_ARCHS if r.cuda_major == nvcc_major), None)
    return rng is not None and cc_at_least(cc, rng.min_cc) and cc_at_least(rng.max_cc, cc)


def torch_archs(torch: TorchFacts) -> tuple[tuple[str, ...], tuple[str, ...], str] | None:
    """The wheel's cubins and PTX: measured from torch if we have it, else the knowledge base (said so)."""
    if known(torch.arch_list) and torch.arch_list:
        cubins, ptx = arch_list_to_ccs(torch.arch_list)
        return cubins, ptx, "torch.cuda.get_arch_list()"
    try:
        v = Version(str(torch.version))
    except InvalidVersion:
        return None
    row = lookup(f"{v.major}.{v.minor}", torch.cuda) if known(torch.cuda) else None
    return (row.archs, row.ptx, f"knowledge base (not measured here): {row.source}") if row else None


def stack_of(facts: Facts, cc: str, card: str) -> Stack:
    py, nvml = facts.python, facts.nvml
    t = py.torch
    torch_ok = t.installed and known(t.version)
    build = py.exllamav2_build
    jit_due = known(py.packages.get("exllamav2")) and not (build and (build.prebuilt or build.built))
    return Stack(cc=cc, card=card, driver=nvml.driver_version if known(nvml.driver_version) else None,
                 torch_version=str(t.version) if torch_ok else None,
                 torch_cuda=str(t.cuda) if torch_ok and known(t.cuda) and t.cuda != "none" else None,
                 nvcc_version=str(py.nvcc.version) if known(py.nvcc.version) else None,
                 packages={k: v for k, v in py.packages.items() if known(v)}, jit_build_due=jit_due)


def engine_driver_problem(stack: Stack, floor: DriverFloor | None) -> Problem | None:
    """The engine's bundled CUDA runtime needs a newer driver branch than this one (Ollama 0.30+: R550, R570 on
    cc 5.0-6.2): the engine drops the GPU and runs on the CPU."""
    branch = driver_branch(stack.driver)
    if floor is None or branch is None or branch >= floor.branch:
        return None
    return _p("driver_too_old_for_engine", f"driver {stack.driver} (R{branch}): {floor.summary}")


def _p(kind: str, detail: str) -> Problem:
    return Problem(kind=kind, detail=detail, subject=KINDS[kind])


def find_problems(facts: Facts, stack: Stack) -> tuple[Problem, ...]:
    """Every problem of the driver / torch / nvcc stack for this card, in the order they block."""
    cc, sm, t = stack.cc, "sm_" + stack.cc.replace(".", ""), facts.python.torch
    out: list[Problem] = []
    branch, last = driver_branch(stack.driver), last_branch(cc)
    if branch and last and branch > last:
        out.append(_p("driver_too_new_for_card", f"driver {stack.driver} (R{branch}) no longer drives {stack.card} "
                      f"(cc {cc}); R{last} is the last branch for it"))
    if not t.installed:
        out.append(_p("torch_missing", "torch is not installed, so no CUDA build can be checked"))
    elif not known(t.version):
        out.append(_p("torch_broken", f"torch is installed but broken: {t.reason}"))
    elif t.cuda == "none" and (rocm := rocm_of(str(t.version))):
        out.append(_p("torch_rocm", f"torch {t.version} is a ROCm {rocm} build (for AMD GPUs): it cannot use an NVIDIA GPU"))
    elif t.cuda == "none":
        out.append(_p("torch_cpu_only", f"torch {t.version} is a CPU-only build: it cannot use the GPU at all"))
    else:
        archs = torch_archs(t)
        if archs is None:
            out.append(_p("torch_arch_unknown", f"torch {t.version}: its arch list is not known here, so kernel support "
                          f"for {sm} is unverified"))
        else:
            cubins, ptx, _ = archs
            kind = wheel_has_kernel(cubins, ptx, cc)
            if kind is None:
                shipped = ", ".join("sm_" + c.replace(".", "") for c in cubins)
                out.append(_p("torch_no_kernel", f"torch {t.version} has no kernel for {sm} (it ships {shipped}): every CUDA "
                              "op fails with \"no kernel image is available for execution on the device\""))
            elif kind == "ptx":
                out.append(_p("torch_ptx_only", f"torch {t.version} has only PTX for {sm}: kernels are JIT-compiled at "
                              "start-up (slow first run, needs the toolkit driver)"))
        if (stack.driver and stack.torch_cuda and driver_runs_cuda(stack.driver, stack.torch_cuda) is None
                and not runs_through_compat(facts, stack.card, stack.torch_cuda)):  # torch ran it: not too old
            fc = forward_compat(facts, stack.card)
            says = ("forward compatibility (a cuda-compat libcuda is in reach) works on data-centre GPUs only, so CUDA "
                    "fails with error 804 \"forward compatibility was attempted on non supported HW\""
                    if fc and not fc.supported else "torch reports \"The NVIDIA driver on your system is too old\"")
            out.append(_p("driver_too_old_for_torch", f"driver {stack.driver} is too old for torch's CUDA {stack.torch_cuda}: "
                          f"{says}"))
    blocked = any(p.kind in ("driver_too_new_for_card", "torch_no_kernel", "driver_too_old_for_torch") for p in out)
    if stack.torch_cuda and t.device_count == 0 and not blocked:  # torch ran and saw no CUDA device
        why = t.warnings[0] if t.warnings else "torch recorded no reason"
        out.append(_p("torch_sees_no_gpu", f"torch {t.version} (CUDA {stack.torch_cuda}) sees no CUDA device although "
                      f"NVML lists {len(facts.nvml.gpus)}: {why}"))
    nv = stack.nvcc_major
    if stack.nvcc_version:
        if not nvcc_targets(nv, cc) and any(r.cuda_major == nv for r in NVCC_ARCHS):
            rng = next(r for r in NVCC_ARCHS if r.cuda_major == nv)
            out.append(_p("nvcc_cannot_target", f"nvcc {stack.nvcc_version} cannot compile for {sm} (CUDA {nv} targets "
                          f"{rng.min_cc}-{rng.max_cc}): JIT builds such as ExLlamaV2's fail with "
                          f"\"Unsupported gpu architecture 'compute_{cc.replace('.', '')}'\""))
        tc = major(stack.torch_cuda) if stack.torch_cuda else None
        if tc is not None and nv is not None and tc != nv:
            out.append(_p("nvcc_major_mismatch", f"nvcc {stack.nvcc_version} and torch's CUDA {stack.torch_cuda} differ in "
                          "major version: JIT builds fail with \"The detected CUDA version ... mismatches the version that "
                          "was used to compile PyTorch\""))
    elif stack.jit_build_due:
        out.append(_p("nvcc_missing", "no nvcc: the build fails with \"CUDA_HOME environment variable is not set\""))
    if stack.jit_build_due and not known(facts.python.nvcc.ninja):
        out.append(_p("ninja_missing", "no ninja on PATH: the build fails with \"Ninja is required to load C++ extensions\""))
    return tuple(out)
