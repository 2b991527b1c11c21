"""Which inference engines are installed, what their CUDA code was built for, and how the user launches them.

Filled by doctor/facts/engines/installed.py (live) and doctor/facts/engines/launch.py (a llama-server command line
or an Ollama model's parameters); judged by checks/engine/. Every field is a value or Unknown.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from doctor.model.ids import Engine
from doctor.model.unknown import Maybe, Unknown

NOT_GATHERED = Unknown("not gathered")
FA_WORDS = {"on": "on", "off": "off", "auto": "auto", "1": "on", "0": "off", "true": "on", "false": "off",
            "enabled": "on", "disabled": "off"}
SERVER_LABEL = {"ollama": "Ollama", "llama-server": "llama-server", "vllm": "vLLM", "tabbyapi": "TabbyAPI",
                "lm-studio": "LM Studio", "openai-compatible": "an OpenAI-compatible server"}  # a server's flavour, named
SERVER_ENGINE = {"ollama": Engine.OLLAMA, "llama-server": Engine.LLAMA_CPP, "lm-studio": Engine.LLAMA_CPP,
                 "vllm": Engine.VLLM, "tabbyapi": Engine.EXLLAMAV2}  # the engine behind each (TabbyAPI's exl2 branch)
__all__ = ["FA_WORDS", "SERVER_ENGINE", "SERVER_LABEL", "CudaLibrary", "Engine", "EngineFacts", "EngineLaunch", "EngineServer", "InForce", "LlamaCppFacts",
           "LmStudioFacts", "LmStudioRuntime", "OllamaFacts"]


@dataclass(frozen=True)
class InForce:
    """The engine the checks judged, and why (doctor/engines/in_force.py decides it; the report states it)."""

    engine: Engine
    why: str  # the evidence, in a phrase the report prints after "judged as <engine>:"
    assumed: bool = False  # no evidence named the engine: the doctor's default


@dataclass(frozen=True)
class EngineServer:
    """A running engine server named by --engine-url, as it answered when the run started (doctor/probe/served/):
    which API it speaks, which engine it is, what it has loaded. `problem` says why it could not be asked (refused,
    timed out, not JSON, not an engine's API): the probe's finding then names it and the fix, exit 3."""

    url: str
    api: str = ""  # "ollama" (its native /api) | "openai" (an OpenAI-compatible /v1)
    flavour: str = ""  # ollama | llama-server | vllm | tabbyapi | lm-studio | openai-compatible
    engine: Engine | None = None  # the engine it runs, where the flavour names one
    version: str = ""
    models: tuple[str, ...] = ()  # what it serves (/api/tags, /v1/models)
    loaded: tuple[str, ...] = ()  # what it has in memory now (Ollama's /api/ps)
    local: bool = False  # on this host: this host's GPUs are the server's, NVML is sampled while it runs
    problem: str = ""  # one line: why it could not be asked, and the fix

    @property
    def label(self) -> str:
        return SERVER_LABEL.get(self.flavour, SERVER_LABEL["openai-compatible"])


@dataclass(frozen=True)
class CudaLibrary:
    """A ggml CUDA library and the architectures its fat binary holds (read from ELF headers, never loaded)."""

    path: str
    cubins: Maybe[tuple[int, ...]] = NOT_GATHERED  # SM versions with machine code: 70 = sm_70
    ptx: Maybe[tuple[int, ...]] = NOT_GATHERED  # SM versions with PTX, which a newer card can JIT-compile
    runner: str = ""  # Ollama's runner folder (cuda_v12, cuda_v13); "" for llama.cpp


@dataclass(frozen=True)
class LlamaCppFacts:
    binaries: dict[str, str] = field(default_factory=dict)  # llama-server / llama-cli / llama-bench -> path
    python_package: Maybe[str] = Unknown("not installed")  # llama-cpp-python's version
    cuda_libraries: tuple[CudaLibrary, ...] = ()

    @property
    def installed(self) -> bool:
        return bool(self.binaries) or not isinstance(self.python_package, Unknown)


@dataclass(frozen=True)
class OllamaFacts:
    path: Maybe[str] = Unknown("ollama is not on PATH")
    version: Maybe[str] = NOT_GATHERED
    runners: tuple[str, ...] = ()  # the folders under lib/ollama: cuda_v12, cuda_v13, ...
    cuda_libraries: tuple[CudaLibrary, ...] = ()

    @property
    def installed(self) -> bool:
        return not isinstance(self.path, Unknown)


@dataclass(frozen=True)
class LmStudioRuntime:
    """One llama.cpp runtime LM Studio has installed (~/.lmstudio/extensions/backends/<name>-<version>)."""

    name: str  # "llama.cpp-linux-x86_64-nvidia-cuda12-avx2"
    version: str  # "1.48.0": LM Studio's own runtime versioning, not llama.cpp's build number
    gpu: str  # cuda12 | cuda13 | cuda | vulkan | rocm | metal | cpu
    cuda_libraries: tuple[CudaLibrary, ...] = ()  # its libggml-cuda.so, read as llama.cpp's are

    @property
    def label(self) -> str:
        what = {"cuda12": "CUDA 12", "cuda13": "CUDA 13", "cuda": "CUDA", "vulkan": "Vulkan", "rocm": "ROCm",
                "metal": "Metal", "cpu": "CPU"}.get(self.gpu, self.gpu)
        return f"{what} llama.cpp runtime v{self.version}"


@dataclass(frozen=True)
class LmStudioFacts:
    """LM Studio, which runs GGUF models on llama.cpp runtimes of its own (a llama.cpp flavour): where it keeps them,
    its CLI, and the runtime it has selected for GGUF (.internal/backend-preferences-v1.json)."""

    home: str = ""  # ~/.lmstudio (or the older ~/.cache/lm-studio); "": not found
    lms: str = ""  # its CLI (~/.lmstudio/bin/lms)
    runtimes: tuple[LmStudioRuntime, ...] = ()
    selected: str = ""  # "name-version" of the runtime selected for GGUF; "": not read

    @property
    def installed(self) -> bool:
        return bool(self.home) and bool(self.runtimes or self.lms)

    @property
    def in_use(self) -> LmStudioRuntime | None:
        """The runtime GGUF models load with: the selected one, else the only GPU one, else None."""
        chosen = next((r for r in self.runtimes if f"{r.name}-{r.version}" == self.selected), None)
        gpu = [r for r in self.runtimes if r.gpu != "cpu"]
        return chosen or (gpu[0] if len(gpu) == 1 else None)


@dataclass(frozen=True)
class EngineFacts:
    llama_cpp: LlamaCppFacts = LlamaCppFacts()
    ollama: OllamaFacts = OllamaFacts()
    env: dict[str, str] = field(default_factory=dict)  # GGML_CUDA_*, OLLAMA_*, LLAMA_ARG_* as set
    lm_studio: LmStudioFacts = LmStudioFacts()  # absent in reports before issue 35's LM Studio hosts


@dataclass(frozen=True)
class EngineLaunch:
    """How the user starts the engine, in llama.cpp's terms (an Ollama model's parameters are mapped onto them)."""

    engine: Engine
    source: str  # the file it was read from, or "command line"
    model_path: str | None = None  # -m
    n_gpu_layers: int | None = None  # -ngl / num_gpu (None: not set, the engine's default)
    n_ctx: int | None = None  # -c / num_ctx
    cache_type_k: str | None = None  # -ctk / OLLAMA_KV_CACHE_TYPE
    cache_type_v: str | None = None  # -ctv / OLLAMA_KV_CACHE_TYPE
    flash_attn: str | None = None  # "on" | "off" | "auto" (-fa / OLLAMA_FLASH_ATTENTION)
    split_mode: str | None = None  # -sm none|layer|row
    tensor_split: tuple[float, ...] | None = None  # -ts
    n_ubatch: int | None = None  # -ub
    notes: tuple[str, ...] = ()  # how each setting was read, and what was not understood

    def with_ollama_env(self, env: dict[str, str]) -> EngineLaunch:
        """The Ollama server's environment under the model's parameters: flash attention, K/V cache type, context
        (OLLAMA_FLASH_ATTENTION, OLLAMA_KV_CACHE_TYPE, OLLAMA_CONTEXT_LENGTH: https://github.com/ollama/ollama/blob/main/docs/faq.md)."""
        changes: dict = {}
        fa = env.get("OLLAMA_FLASH_ATTENTION")
        if fa is not None and self.flash_attn is None:
            changes["flash_attn"] = FA_WORDS.get(fa.strip().lower(), "on" if fa.strip() else "off")
        kv = env.get("OLLAMA_KV_CACHE_TYPE")
        if kv and self.cache_type_k is None:
            changes["cache_type_k"] = changes["cache_type_v"] = kv.strip().lower()
        ctx = env.get("OLLAMA_CONTEXT_LENGTH")
        if ctx and ctx.strip().isdigit() and self.n_ctx is None:
            changes["n_ctx"] = int(ctx)
        return replace(self, **changes) if changes else self
