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
    """The id of every finding: the registered checks, then the findings only the probe stage makes."""

    GPU_PRESENT = "gpu-present"
    COMPUTE_CAPABILITY = "compute-capability"
    CUDA_PAIRING = "cuda-pairing"
    FLASH_ATTN = "flash-attn"
    GPU_NUMBERING = "gpu-numbering"
    GPU_TOPOLOGY = "gpu-topology"
    MODEL_PATH = "model-path"
    DTYPE = "dtype"
    QUANT_FORMAT = "quant-format"
    MEMORY_BUDGET = "memory-budget"
    CEILING = "ceiling"
    CPU_OFFLOAD = "cpu-offload"
    GPU_MEMORY_HEALTH = "gpu-memory-health"
    PCIE_LINK = "pcie-link"
    THERMAL = "thermal"
    GPU_PROCESSES = "gpu-processes"
    EXLLAMAV2_READY = "exllamav2-ready"
    # the engine the plan runs (checks/engine/): llama.cpp, Ollama, ExLlamaV2, Transformers
    ENGINE = "engine"
    ENGINE_BUILD = "engine-build"
    ENGINE_LAUNCH = "engine-launch"
    GGUF_BUDGET = "gguf-budget"
    # findings of the probe stage (doctor/run/probe_stage.py, doctor/verdict/): no registered check has these
    MODEL_LOAD = "model-load"
    PROBE = "probe"
    DECODE_SPEED = "decode-speed"


# the ids above that only the probe stage emits; every other member is a registered check (tested)
PROBE_STAGE_IDS = frozenset({CheckId.MODEL_LOAD, CheckId.PROBE, CheckId.DECODE_SPEED})


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
    """The inference engines a plan can name (--engine); each has its adapter in doctor/engines/."""

    EXLLAMAV2 = "exllamav2"
    LLAMA_CPP = "llama.cpp"
    OLLAMA = "ollama"
    TRANSFORMERS = "transformers"
    TABBYAPI = "tabbyapi"  # TabbyAPI's main branch (EXL3 only); its exl2-checkpoint branch runs exllamav2
    VLLM = "vllm"


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
