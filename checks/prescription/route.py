"""From the structured problems to one route (or two named alternatives), smallest change first.

Rules: change torch only when torch is the problem; prefer the installed release with another
CUDA variant, then the nearest release; pin torchvision/torchaudio with it and name what must be
rebuilt; a driver step never goes past the card's last branch; one CUDA major for torch and nvcc.
"""

from __future__ import annotations

from dataclasses import dataclass

from checks.prescription.compat import driver_floor, driver_runs_cuda, wheel_has_kernel
from checks.prescription.problems import (
    KINDS,
    TORCH_KINDS,
    Stack,
    driver_branch,
    engine_driver_problem,
    find_problems,
    last_branch,
    nvcc_targets,
    stack_of,
)
from doctor.engines.base import DriverFloor
from doctor.knowledge.attention import FLASH_ATTN_COMMANDS, flash_attn_generation, flash_attn_supports
from doctor.knowledge.cuda import LAST_LEGACY_BRANCH_EOL, MVC, TOOLKIT_DRIVER
from doctor.knowledge.torch_companions import PREVIOUS_VERSIONS, REBUILT_WITH_TORCH, RULE_READ_UP_TO, companion_pin
from doctor.knowledge.torch_wheels import WHEELS, WheelArchs
from doctor.model.facts import Facts
from doctor.model.prescription import Prescription, Problem, Route, Step

INDEX = "https://download.pytorch.org/whl/"
# the newest driver of the R580 branch in the CUDA 13.0 U2 row (RELNOTES Table 3): a concrete example, not a pin
R580_EXAMPLE = "580.95.05"


@dataclass(frozen=True)
class _Candidate:
    row: WheelArchs
    same_release: bool


def _minor(row: WheelArchs) -> int:
    return int(row.torch.split(".")[1])


def torch_candidates(stack: Stack, driver: str | None) -> list[_Candidate]:
    """Wheels with a cubin for this card that run on `driver`, the smallest change first."""
    rel = stack.torch_release
    usable_nvcc = stack.nvcc_major if nvcc_targets(stack.nvcc_major, stack.cc) else None
    out = []
    for row in WHEELS:
        if wheel_has_kernel(row.archs, row.ptx, stack.cc) != "cubin":
            continue
        if driver and driver_runs_cuda(driver, row.cuda) is None:
            continue
        if rel and (row.torch, row.cuda) == (f"{rel[0]}.{rel[1]}", stack.torch_cuda):
            continue  # the installed wheel is the problem
        out.append(_Candidate(row, rel is not None and row.torch == f"{rel[0]}.{rel[1]}"))

    def key(c: _Candidate) -> tuple[int, bool, bool, int, float]:
        distance = abs(_minor(c.row) - rel[1]) if rel else -_minor(c.row)
        keeps_nvcc = usable_nvcc is not None and int(c.row.cuda.split(".")[0]) == usable_nvcc
        mode = driver_runs_cuda(driver, c.row.cuda) if driver else "toolkit"
        return (distance, not keeps_nvcc, mode != "toolkit", -_minor(c.row), -float(c.row.cuda))

    return sorted(out, key=key)


def torch_step(stack: Stack, cand: _Candidate) -> tuple[Step, ...]:
    """The pip line for torch (and its installed companions, pinned), plus what must be rebuilt with it."""
    minor = _minor(cand.row)
    rel = stack.torch_release
    patch = rel[2] if cand.same_release and rel else None
    torch_pin = f"{cand.row.torch}.{patch}" if patch is not None else f"{cand.row.torch}.*"
    pins = [f'"torch=={torch_pin}"']
    pinned = []
    for name in ("torchvision", "torchaudio"):
        if name in stack.packages:
            pins.append(f'"{name}=={companion_pin(name, minor)}"')
            pinned.append(name)
    tag = "cu" + cand.row.cuda.replace(".", "")
    now = stack.torch_version or "no torch"
    what = "another CUDA variant of the same release" if cand.same_release else f"the nearest release that fits, {cand.row.torch}"
    steps = [Step(kind="torch", command=f"pip install {' '.join(pins)} --index-url {INDEX}{tag}",
                  changes=f"torch {now} -> {torch_pin}+{tag}" + (f" (with {', '.join(pinned)} pinned to match)" if pinned else ""),
                  why=f"{what}: its wheel has sm_{stack.cc.replace('.', '')} kernels and runs on this driver "
                      f"(source: {cand.row.source})" + (f"; companion pins follow {PREVIOUS_VERSIONS}"
                      + (" (the rule, not re-read for this release)" if minor > RULE_READ_UP_TO else "") if pinned else ""),
                  cuda_major=int(cand.row.cuda.split(".")[0]))]
    for name, source in REBUILT_WITH_TORCH.items():
        if name == "flash-attn" and name in stack.packages and not _flash_attn_runs(stack):
            steps.append(Step(kind="companion", command=FLASH_ATTN_COMMANDS[0],
                              changes=f"removes flash-attn {stack.packages[name]}",
                              why=f"it cannot run on cc {stack.cc} (see flash-attn) and is built for the old torch; "
                                  "ExLlamaV2 then uses xformers or torch SDPA"))
        elif name in stack.packages:
            steps.append(Step(kind="companion", action=f"replace {name} {stack.packages[name]} with a build for torch "
                              f"{torch_pin}+{tag} (or uninstall it: ExLlamaV2 then uses torch SDPA)",
                              changes=f"{name} {stack.packages[name]}", why=f"{name} is compiled against one torch release; "
                              f"the old build fails to import after the change (source: {source})"))
    return tuple(steps)


def _flash_attn_runs(stack: Stack) -> bool:
    gen = flash_attn_generation(str(stack.packages.get("flash-attn", "")))
    return gen is not None and flash_attn_supports(gen, stack.cc)


def toolkit_step(stack: Stack, cuda_major: int) -> Step | None:
    """Point JIT builds at a toolkit of torch's CUDA major that can still target this card."""
    if not nvcc_targets(cuda_major, stack.cc):
        return None
    home = f"/usr/local/cuda-{cuda_major}"
    now = f"nvcc {stack.nvcc_version}" if stack.nvcc_version else "no nvcc"
    return Step(kind="toolkit", command=f"export CUDA_HOME={home} PATH={home}/bin:$PATH",
                action=f"install a CUDA {cuda_major}.x toolkit (from NVIDIA's archive) if {home} is not there yet",
                changes=f"{now} -> nvcc {cuda_major}.x for JIT builds", why=f"ExLlamaV2's JIT build needs nvcc of torch's "
                f"CUDA major ({cuda_major}) that can compile for sm_{stack.cc.replace('.', '')}", cuda_major=cuda_major)


def _needs_toolkit(stack: Stack, cuda_major: int) -> bool:
    has_nvcc = stack.nvcc_major is not None
    fits = has_nvcc and stack.nvcc_major == cuda_major and nvcc_targets(stack.nvcc_major, stack.cc)
    return not fits and (has_nvcc or stack.jit_build_due)


def _toolchain_tail(stack: Stack, cuda_major: int | None, problems: tuple[Problem, ...]) -> list[Step]:
    steps = []
    if cuda_major is not None and _needs_toolkit(stack, cuda_major) and (s := toolkit_step(stack, cuda_major)):
        steps.append(s)
    if any(p.kind == "ninja_missing" for p in problems):
        steps.append(Step(kind="build", command="pip install ninja", changes="adds ninja",
                          why="torch's cpp_extension needs ninja to build ExLlamaV2's extension"))
    return steps


def _driver_floor(cuda: str) -> tuple[int, str] | None:
    """The branch and version of the lowest driver that runs this CUDA: compat.driver_floor, the live check's rule."""
    floor = driver_floor(cuda)
    if floor is None or (branch := driver_branch(floor[0])) is None:
        return None
    return branch, floor[0]


def driver_step(stack: Stack, cuda: str | None) -> Step | None:
    """A driver within the card's last branch that runs `cuda` (None: any driver up to the last branch)."""
    last = last_branch(stack.cc)
    floor = _driver_floor(cuda) if cuda else None
    if floor and last and floor[0] > last:
        return None
    if floor:
        target = f"R{floor[0]} ({floor[1]}) or newer" + (f", at most R{last}, the last branch for {stack.card}" if last else "")
    else:
        target = f"R{last}, the last branch for {stack.card}" if last else "a current branch"
    example = (f"; e.g. {R580_EXAMPLE} ({LAST_LEGACY_BRANCH_EOL[0]}; Ubuntu: sudo apt install nvidia-driver-580-server)"
               if last == 580 else "")
    return Step(kind="driver", action=f"install an NVIDIA data-center driver {target}{example}; then reboot",
                changes=f"driver {stack.driver or 'none'} -> {target}",
                why=(f"torch's CUDA {cuda} needs it" if cuda else "a branch that still drives this card")
                + f" (sources: {MVC} ; {TOOLKIT_DRIVER[0][2]} ; {LAST_LEGACY_BRANCH_EOL[1]})", driver_branch=last or (floor[0] if floor else None))


def _torch_route(stack: Stack, problems: tuple[Problem, ...], driver: str | None, lead: tuple[Step, ...] = ()) -> Route | None:
    cands = torch_candidates(stack, driver)
    if not cands:
        return None
    best = cands[0]
    steps = lead + torch_step(stack, best)
    steps += tuple(_toolchain_tail(stack, int(best.row.cuda.split(".")[0]), problems))
    name = ("change the CUDA variant of torch" if best.same_release else
            "install torch" if stack.torch_version is None else
            "downgrade torch" if stack.torch_release and _minor(best.row) < stack.torch_release[1] else "upgrade torch")
    also = [f"{c.row.torch}+cu{c.row.cuda.replace('.', '')}" for c in cands[1:4]]
    cost = "reinstalls torch, a few GB download; keeps the driver" + (f"; also fine: {', '.join(also)}" if also else "")
    return Route(name=name, cost=cost, steps=steps)


ALL_PARTS = frozenset(KINDS.values())


@dataclass(frozen=True)
class EngineNeeds:
    """What the engine in force runs on, for the route: the parts of the CUDA stack (a llama.cpp host: the driver
    only), the driver branch its own CUDA runtime needs, and its own route where its wheel pins torch (vLLM)."""

    parts: frozenset[str] = ALL_PARTS
    floor: DriverFloor | None = None
    engine_route: Route | None = None  # replaces the torch route: the engine's release that brings a torch for the card


def engine_driver_step(stack: Stack, floor: DriverFloor) -> Step:
    last = last_branch(stack.cc)
    top = f", at most R{last}, the last branch for {stack.card}" if last else ""
    example = (f"; e.g. {R580_EXAMPLE} ({LAST_LEGACY_BRANCH_EOL[0]}; Ubuntu: sudo apt install nvidia-driver-580-server)"
               if last == 580 else "")
    return Step(kind="driver", action=f"install an NVIDIA data-center driver R{floor.branch} or newer{top}{example}; then reboot",
                changes=f"driver {stack.driver or 'none'} -> R{floor.branch}+", why=f"{floor.summary} (source: {floor.source})",
                driver_branch=last or floor.branch)


def prescribe(facts: Facts, cc: str, card: str, needs: EngineNeeds = EngineNeeds()) -> Prescription:
    """The route for this machine's card `cc` (named `card`): empty when nothing in the parts of its CUDA stack that
    the engine runs on is wrong."""
    stack = stack_of(facts, cc, card)
    problems = tuple(p for p in find_problems(facts, stack) if p.subject in needs.parts)
    if (low := engine_driver_problem(stack, needs.floor)) is not None and needs.floor is not None:
        problems += (low,)
    kinds = {p.kind for p in problems}
    if not kinds - {"torch_arch_unknown"}:
        return Prescription(problems=problems)
    if needs.engine_route is not None and kinds & (TORCH_KINDS | {"driver_too_old_for_torch"}):
        return Prescription(problems=problems, routes=(needs.engine_route,))
    if low is not None and needs.floor is not None and not kinds & (TORCH_KINDS | {"driver_too_old_for_torch"}):
        return Prescription(problems=problems, routes=(Route(
            name="upgrade the driver", cost="a driver install and a reboot (stops every GPU job)",
            steps=(engine_driver_step(stack, needs.floor),)),))
    routes: list[Route] = []
    lead: tuple[Step, ...] = ()
    driver = stack.driver
    if "driver_too_new_for_card" in kinds and (s := driver_step(stack, None)):
        lead, driver = (s,), R580_EXAMPLE
    torch_problem = bool(kinds & TORCH_KINDS) or "driver_too_old_for_torch" in kinds  # torch or the driver may give
    if torch_problem:
        if r := _torch_route(stack, problems, driver, lead):
            routes.append(r)
        if "driver_too_old_for_torch" in kinds and not kinds & (TORCH_KINDS - {"driver_too_old_for_torch"}):
            if stack.torch_cuda and (s := driver_step(stack, stack.torch_cuda)):  # the problem says torch has a CUDA
                tail = _toolchain_tail(stack, int(stack.torch_cuda.split(".")[0]), problems)
                routes.append(Route(name="upgrade the driver", cost="a driver install and a reboot (stops every GPU job); "
                                    "keeps torch", steps=(s, *tail)))
        if not routes and (s := driver_step(stack, None)):  # nothing runs on this driver: a driver first, then torch
            if r := _torch_route(stack, problems, R580_EXAMPLE if last_branch(cc) == 580 else None, (s,)):
                routes.append(Route(name="upgrade the driver, then torch", cost=r.cost, steps=r.steps))
    else:
        cuda_major = int(stack.torch_cuda.split(".")[0]) if stack.torch_cuda else None
        steps = list(lead) + (_toolchain_tail(stack, cuda_major, problems) if "nvcc" in needs.parts else [])
        if steps:
            routes.append(Route(name="fix the toolchain" if not lead else "install a driver that drives this card",
                                cost="keeps torch" + ("; a driver install and a reboot" if lead else ""), steps=tuple(steps)))
    note = "" if routes else "no torch wheel in the knowledge base fits this card and driver"
    return Prescription(problems=problems, routes=tuple(routes), note=note)
