"""What a --target-gpu card will need, as a plan: the torch builds with its kernels, the driver branch, the nvcc
major. The card is a planning target, not this machine's: this machine's software is neither judged nor
prescribed for; it is judged when the doctor runs on the target."""

from __future__ import annotations

from checks.prescription.compat import driver_floor, wheel_has_kernel
from checks.prescription.problems import driver_branch, last_branch, nvcc_targets
from doctor.knowledge.cuda import MVC, NVCC_ARCHS, TOOLKIT_DRIVER
from doctor.knowledge.torch_wheels import WHEELS, WheelArchs
from doctor.model.prescription import Prescription, Route, Step

INDEX = "https://download.pytorch.org/whl/"
LATER = "this machine is not changed: its software is judged when the doctor runs on the target"


def _minor(row: WheelArchs) -> int:
    return int(row.torch.split(".")[1])


def torch_builds(cc: str, limit: int = 3) -> list[WheelArchs]:
    """The newest torch release of each CUDA variant that ships a kernel (a cubin) for `cc`, newest first."""
    newest: dict[str, WheelArchs] = {}
    for row in WHEELS:
        if wheel_has_kernel(row.archs, row.ptx, cc) == "cubin" and (row.cuda not in newest or
                                                                     _minor(row) > _minor(newest[row.cuda])):
            newest[row.cuda] = row
    return sorted(newest.values(), key=lambda r: (-_minor(r), -float(r.cuda)))[:limit]


def nvcc_major_for(cc: str, cuda_major: int | None) -> int | None:
    """The nvcc major that compiles for `cc`: torch's own CUDA major when it can (JIT builds need them equal)."""
    majors = [r.cuda_major for r in NVCC_ARCHS if nvcc_targets(r.cuda_major, cc)]
    if cuda_major in majors:
        return cuda_major
    return max(majors) if majors else None


def target_plan(cc: str, card: str) -> Prescription:
    """One route of plan steps (actions only, no command for this machine) for `card` (cc `cc`)."""
    builds = torch_builds(cc)
    steps: list[Step] = []
    first = builds[0] if builds else None
    if first is not None:
        also = ", ".join(f"{r.torch}+cu{r.cuda.replace('.', '')}" for r in builds[1:])
        steps.append(Step(kind="torch", changes=f"torch on the target: a build with sm_{cc.replace('.', '')} kernels",
                          why=f"{first.torch}+cu{first.cuda.replace('.', '')} is the newest" + (f" (also: {also})" if also else "")
                          + f" (source: {first.source})",
                          action=f'on the target: pip install "torch=={first.torch}.*" --index-url '
                                 f"{INDEX}cu{first.cuda.replace('.', '')}", cuda_major=int(first.cuda.split(".")[0])))
    last = last_branch(cc)
    floor = driver_floor(first.cuda) if first is not None else None  # the live check's rule (compat.driver_floor)
    lowest = driver_branch(floor[0]) if floor else None
    branch = (f"R{lowest} ({floor[0]}) or newer" if floor and lowest else "a branch that runs it") + \
        (f", at most R{last} (the last branch for {card})" if last else "")
    steps.append(Step(kind="driver", changes=f"driver on the target: {branch}",
                      why=(f"torch's CUDA {first.cuda} needs it" if first is not None else "the card needs a branch that drives it")
                      + f" (sources: {MVC} ; {TOOLKIT_DRIVER[0][2]})", action=f"on the target: an NVIDIA driver {branch}",
                      driver_branch=last or lowest))
    nvcc = nvcc_major_for(cc, int(first.cuda.split(".")[0]) if first is not None else None)
    if nvcc is not None:
        steps.append(Step(kind="toolkit", changes=f"nvcc on the target: {nvcc}.x for JIT builds (ExLlamaV2)",
                          why=f"nvcc {nvcc} compiles for sm_{cc.replace('.', '')} and matches torch's CUDA major",
                          action=f"on the target: a CUDA {nvcc}.x toolkit (CUDA_HOME pointing at it)", cuda_major=nvcc))
    return Prescription(routes=(Route(name=f"plan for {card} (--target-gpu)", cost=LATER, steps=tuple(steps)),),
                        note=f"a plan for {card}: {LATER}")


def plan_sentence(rx: Prescription) -> str:
    """The plan in one sentence, for a finding's summary."""
    return "; ".join(s.changes for s in rx.routes[0].steps) + f" ({LATER})" if rx.routes else LATER
