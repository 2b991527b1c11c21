"""Versions of the packages that decide the kernel path, nvcc/ninja, and relevant env vars."""

from __future__ import annotations

import os
import re
import shutil
import sys
from importlib import metadata

from doctor.facts.children import run_output
from doctor.model.facts import NvccFacts
from doctor.model.unknown import Maybe, Unknown

PACKAGES = (
    "torch", "flash-attn", "xformers", "exllamav2", "bitsandbytes", "vllm", "transformers",
    "accelerate", "tokenizers", "ninja", "auto-gptq", "autoawq", "optimum", "nvidia-ml-py",
)

ENV_VARS = (
    "CUDA_VISIBLE_DEVICES", "CUDA_HOME", "CUDA_PATH", "TORCH_CUDA_ARCH_LIST", "MAX_JOBS",
    "EXLLAMA_NO_FLASH_ATTN", "EXLLAMA_NO_XFORMERS", "EXLLAMA_NO_SDPA", "PYTORCH_CUDA_ALLOC_CONF",
    "CUDA_MODULE_LOADING", "TORCH_EXTENSIONS_DIR", "CUDA_DEVICE_ORDER",
    # a container's GPU runtime and a forward-compatibility CUDA (doctor/facts/host/runtime_env.py)
    "NVIDIA_VISIBLE_DEVICES", "NVIDIA_REQUIRE_CUDA", "NV_CUDA_COMPAT_PACKAGE", "LD_LIBRARY_PATH",
)


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, Maybe[str]]:
    out: dict[str, Maybe[str]] = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = Unknown("not installed")
        except Exception as exc:  # a corrupt dist-info must not crash the doctor
            out[name] = Unknown(f"metadata unreadable: {exc}")
    return out


def relevant_env() -> dict[str, str]:
    return {k: os.environ[k] for k in ENV_VARS if k in os.environ}


def _nvcc_candidates() -> list[str]:
    found = []
    if shutil.which("nvcc"):
        found.append(shutil.which("nvcc"))
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            found.append(os.path.join(os.environ[var], "bin", "nvcc"))
    found.append("/usr/local/cuda/bin/nvcc")
    return [p for i, p in enumerate(found) if p and p not in found[:i] and os.path.isfile(p)]


def parse_nvcc_version(text: str) -> Maybe[str]:
    m = re.search(r"release (\d+\.\d+)", text)
    return m.group(1) if m else Unknown("could not parse `nvcc --version`")


def gather_nvcc() -> NvccFacts:
    cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    ninja = shutil.which("ninja") or (
        os.path.join(os.path.dirname(sys.executable), "ninja") if os.path.isfile(os.path.join(os.path.dirname(sys.executable), "ninja")) else None
    )
    candidates = _nvcc_candidates()
    common = dict(
        cuda_home=cuda_home or Unknown("CUDA_HOME is not set"),
        ninja=ninja or Unknown("ninja is not on PATH"),
    )
    if not candidates:
        return NvccFacts(path=Unknown("nvcc not found on PATH, in CUDA_HOME or /usr/local/cuda"),
                         version=Unknown("no nvcc"), **common)
    path = candidates[0]
    try:
        _, out, _ = run_output([path, "--version"], timeout_s=10)
        version = parse_nvcc_version(out)
    except (OSError, TimeoutError) as exc:
        version = Unknown(f"`nvcc --version` failed: {exc}")
    return NvccFacts(path=path, version=version, **common)
