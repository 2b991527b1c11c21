"""The ids the parts exchange, as types: a misspelt id fails where it is written, not silently downstream.

Check ids name a pitfall (a check, or a finding the probe stage adds), probe failure kinds say why a
probe stopped, cause ids name a share of the lost decode time. Each is a str-valued Enum, so a member
compares equal to its text, is written to JSON as that text, and is read back from it
(doctor/model/serialize.py); reports keep their exact bytes.
"""

from __future__ import annotations

from enum import Enum


class _TextId(str, Enum):
    """A str Enum that prints as its text, as enum.StrEnum does (3.11+), on Python 3.10 too."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class CheckId(_TextId):
    """The id of every finding: the checks (each declared by its module, CheckId("its-id"), and written here by
    scripts/generate_registry.py), then the findings only the probe stage makes."""

    # --- written by scripts/generate_registry.py from the check modules; do not edit by hand ---
    GPU_PRESENT = "gpu-present"  # checks.env.gpu_present
    COMPUTE_CAPABILITY = "compute-capability"  # checks.env.compute_capability
    CUDA_PAIRING = "cuda-pairing"  # checks.env.cuda_pairing
    FLASH_ATTN = "flash-attn"  # checks.env.flash_attn
    GPU_NUMBERING = "gpu-numbering"  # checks.multi_gpu.numbering
    GPU_TOPOLOGY = "gpu-topology"  # checks.multi_gpu.topology
    TENSOR_PARALLEL_MIX = "tensor-parallel-mix"  # checks.multi_gpu.tensor_parallel_mix
    MODEL_PATH = "model-path"  # checks.model.path
    QUANT_FORMAT = "quant-format"  # checks.model.quant_format
    ARCHITECTURE = "architecture"  # checks.model.architecture
    DTYPE = "dtype"  # checks.model.dtype
    MEMORY_BUDGET = "memory-budget"  # checks.model.memory_budget
    CEILING = "ceiling"  # checks.model.ceiling
    ENGINE = "engine"  # checks.engine.support
    ENGINE_BUILD = "engine-build"  # checks.engine.build
    ENGINE_LAUNCH = "engine-launch"  # checks.engine.launch
    GGUF_BUDGET = "gguf-budget"  # checks.engine.gguf_fit
    THERMAL = "thermal"  # checks.runtime.thermal
    CPU_OFFLOAD = "cpu-offload"  # checks.runtime.cpu_offload
    GPU_PROCESSES = "gpu-processes"  # checks.runtime.gpu_processes
    PCIE_LINK = "pcie-link"  # checks.runtime.pcie_link
    GPU_MEMORY_HEALTH = "gpu-memory-health"  # checks.runtime.gpu_memory_health
    SERVER_LOAD = "server-load"  # checks.serving.server_load
    EXLLAMAV2_READY = "exllamav2-ready"  # checks.probe.exllamav2_ready
    # --- end of the written part ---
    # findings of the probe stage (doctor/run/probe_stage.py, doctor/verdict/): no registered check has these
    MODEL_LOAD = "model-load"
    PROBE = "probe"
    DECODE_SPEED = "decode-speed"
    CONCURRENCY = "concurrency"  # probe --streams: batched, queued or failing (doctor/verdict/streams.py)


# the ids above that only the probe stage emits; every other member is a registered check (tested)
PROBE_STAGE_IDS = frozenset({CheckId.MODEL_LOAD, CheckId.PROBE, CheckId.DECODE_SPEED, CheckId.CONCURRENCY})


class FailureKind(_TextId):
    """Why a probe stopped: the worker's error kinds (doctor/probe/) and the runner's own outcomes."""

    # recognised from an exception's text by the signature table (doctor/knowledge/signatures.py)
    FLASH_ATTN = "flash-attn"
    NO_KERNEL_IMAGE = "no-kernel-image"
    JIT_BUILD = "jit-build"
    OOM = "oom"
    NOT_INSTALLED = "not-installed"
    MODEL_LOAD = "model-load"
    # decided by the worker itself
    NO_CUDA = "no-cuda"  # torch sees no CUDA device
    BAD_SPEC = "bad-spec"  # the request itself was wrong
    INTERNAL = "internal"  # anything else: a bug, reported with its traceback
    # decided by the runner: how the child ended when it sent no error of its own
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    CRASHED = "crashed"
    FAILED = "failed"

    @classmethod
    def from_wire(cls, text: object) -> "FailureKind":
        """A kind read from the worker's JSON lines; a kind this doctor does not know is an internal error."""
        try:
            return cls(text)
        except ValueError:
            return cls.INTERNAL


class Engine(_TextId):
    """The inference engines a plan can name (--engine); each is a package in doctor/engines/ whose adapter declares
    its id, Engine("its-id"), written here by scripts/generate_registry.py."""

    # --- written by scripts/generate_registry.py from the engine packages; do not edit by hand ---
    EXLLAMAV2 = "exllamav2"  # doctor.engines.exllamav2
    LLAMA_CPP = "llama.cpp"  # doctor.engines.llamacpp
    OLLAMA = "ollama"  # doctor.engines.ollama
    TABBYAPI = "tabbyapi"  # doctor.engines.tabbyapi
    TRANSFORMERS = "transformers"  # doctor.engines.transformers
    VLLM = "vllm"  # doctor.engines.vllm
    # --- end of the written part ---


class CauseId(_TextId):
    """A named share of the gap between the ceiling and the measured decode speed (doctor/verdict/causes.py)."""

    KV_READS = "kv-reads"
    THROTTLED_CLOCKS = "throttled-clocks"
    CPU_OFFLOAD = "cpu-offload"
    HOST_BOUND = "host-bound"
    LAUNCH_BOUND = "launch-bound"
    KERNEL_PATH = "kernel-path"
    GPU_CONTENTION = "gpu-contention"
    UNEXPLAINED = "unexplained"  # what no cause can show evidence for; never a cause itself
