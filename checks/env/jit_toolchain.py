"""Why nvcc here could not JIT-build a torch extension (ExLlamaV2's) for this card: shared by two checks."""

from __future__ import annotations

from checks.knowledge.attention import cc_at_least
from checks.knowledge.cuda import NVCC_ARCHS
from doctor.model.unknown import known


def major(version: object) -> int | None:
    try:
        return int(str(version).split(".")[0])
    except ValueError:
        return None


def nvcc_problems(cc: str, nvcc_version, torch_cuda) -> list[str]:
    """nvcc that cannot target the card, or whose major differs from torch's CUDA (cpp_extension refuses it)."""
    if not known(nvcc_version):
        return []
    problems = []
    nv = major(nvcc_version)
    sm = cc.replace(".", "")
    rng = next((r for r in NVCC_ARCHS if r.cuda_major == nv), None)
    if rng and not (cc_at_least(cc, rng.min_cc) and cc_at_least(rng.max_cc, cc)):
        problems.append(f"nvcc {nvcc_version} cannot compile for sm_{sm} (CUDA {nv} targets {rng.min_cc}-{rng.max_cc}): "
                        f"JIT builds such as ExLlamaV2's fail with \"Unsupported gpu architecture 'compute_{sm}'\"")
    tc = major(torch_cuda) if known(torch_cuda) and torch_cuda != "none" else None
    if tc is not None and nv is not None and tc != nv:
        problems.append(f"nvcc {nvcc_version} and torch's CUDA {torch_cuda} differ in major version: JIT builds fail with "
                        "\"The detected CUDA version ... mismatches the version that was used to compile PyTorch\"")
    return problems


def toolkit_commands(cc: str, torch_cuda) -> list[str]:
    """Point the build at a toolkit of torch's CUDA major that can still target this card."""
    tc = major(torch_cuda) if known(torch_cuda) and torch_cuda != "none" else None
    usable = [r.cuda_major for r in NVCC_ARCHS if cc_at_least(cc, r.min_cc) and cc_at_least(r.max_cc, cc)]
    target = tc if tc in usable else (max(usable) if usable else None)
    if target is None:
        return []
    return [f"# install a CUDA {target}.x toolkit (it can target sm_{cc.replace('.', '')}; keep torch on CUDA {target}.x too), then:",
            f"export CUDA_HOME=/usr/local/cuda-{target} PATH=/usr/local/cuda-{target}/bin:$PATH"]
