"""Gather which engines are installed: llama.cpp binaries and llama-cpp-python, Ollama and its runner libraries.

Nothing is imported or loaded: binaries are found on PATH, packages by their metadata, and the CUDA
architectures of each ggml CUDA library are read from its fat binary's headers (doctor/facts/python/torch_static.py),
as the doctor reads torch's. `ollama --version` is the one command run (a client call, 5 s at most).
"""

from __future__ import annotations

import os
import re
import shutil
from importlib import metadata, util
from pathlib import Path
from typing import Callable, Mapping

from doctor.facts.children import run_output
from doctor.facts.engines.cuda_library import CUDA_LIB, read_cuda_library
from doctor.facts.engines.lm_studio import gather_lm_studio
from doctor.model.engines import EngineFacts, LlamaCppFacts, OllamaFacts
from doctor.model.unknown import Maybe, Unknown

LLAMA_BINARIES = ("llama-server", "llama-cli", "llama-bench")
ENV_PREFIXES = ("GGML_CUDA_", "OLLAMA_", "LLAMA_ARG_", "GGML_")
ENV_NAMES = ("CUDA_VISIBLE_DEVICES", "GGML_CUDA_FORCE_MMQ", "GGML_CUDA_FORCE_CUBLAS", "GGML_CUDA_DISABLE_GRAPHS")
SECRET = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|AUTH", re.I)  # OLLAMA_* may carry credentials: never recorded


def _libs_near(folders: list[Path]) -> list[Path]:
    seen: list[Path] = []
    for d in folders:
        p = d / CUDA_LIB
        if p.is_file() and p.resolve() not in [s.resolve() for s in seen]:
            seen.append(p)
    return seen


def _package_dir(name: str) -> Path | None:
    """An installed top-level package's folder, found without importing it."""
    try:
        spec = util.find_spec(name)
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec else []
    return Path(locations[0]) if locations else None


def gather_llama_cpp(which: Callable[[str], str | None] = shutil.which) -> LlamaCppFacts:
    binaries = {b: p for b in LLAMA_BINARIES if (p := which(b))}
    try:
        pkg: Maybe[str] = metadata.version("llama-cpp-python")
    except metadata.PackageNotFoundError:
        pkg = Unknown("not installed")
    folders = []
    for p in binaries.values():
        real = Path(p).resolve().parent
        folders += [real, real.parent / "lib", real.parent / "lib64"]
    if not isinstance(pkg, Unknown) and (pkg_dir := _package_dir("llama_cpp")):
        folders.append(pkg_dir / "lib")
    libs = tuple(read_cuda_library(p) for p in _libs_near(folders))
    if not libs and binaries:  # a static build (BUILD_SHARED_LIBS=OFF) carries its CUDA code inside the binary
        inside = read_cuda_library(Path(next(iter(binaries.values()))).resolve())
        cpu_only = isinstance(inside.cubins, Unknown) and inside.cubins.reason.endswith("has no CUDA fat binary")
        libs = () if cpu_only else (inside,)
    return LlamaCppFacts(binaries, pkg, libs)


def parse_ollama_version(text: str) -> Maybe[str]:
    """`ollama --version` prints 'ollama version is 0.33.0' (and a warning when no server runs)."""
    m = re.search(r"version is\s+v?(\S+)", text)
    return m.group(1) if m else Unknown(f"could not read a version from {text.strip()[:80]!r}")


def ollama_lib_dir(binary: Path) -> Path:
    """Where an Ollama install keeps its runners: <prefix>/lib/ollama beside <prefix>/bin/ollama."""
    return binary.resolve().parent.parent / "lib" / "ollama"


def gather_ollama(which: Callable[[str], str | None] = shutil.which,
                  run: Callable[..., tuple[int, str, str]] = run_output) -> OllamaFacts:
    path = which("ollama")
    if not path:
        return OllamaFacts()
    try:
        _, out, err = run([path, "--version"], timeout_s=5)
        version = parse_ollama_version(out + "\n" + err)
    except (OSError, TimeoutError) as exc:
        version = Unknown(f"`ollama --version` failed: {exc}")
    lib = ollama_lib_dir(Path(path))
    runners = tuple(sorted(d.name for d in lib.iterdir() if d.is_dir())) if lib.is_dir() else ()
    libs = tuple(read_cuda_library(lib / r / CUDA_LIB, r) for r in runners if (lib / r / CUDA_LIB).is_file())
    return OllamaFacts(path, version, runners, libs)


def engine_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    env = os.environ if environ is None else environ
    return {k: v for k, v in sorted(env.items())
            if (k.startswith(ENV_PREFIXES) or k in ENV_NAMES) and not SECRET.search(k)}


def gather_engines() -> EngineFacts:
    """Never raises: what cannot be read is Unknown with the reason."""
    return EngineFacts(gather_llama_cpp(), gather_ollama(), engine_env(), gather_lm_studio())
