"""What the llama.cpp probe measured (doctor/probe/llamacpp.py): decode runs, llama.cpp's own counters, its buffers.

Plain dataclasses so they serialize; the gap to the ceiling is attributed in doctor/verdict/llamacpp.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from doctor.model.gguf import GgufShape, GgufWeights
from doctor.model.serialize import to_jsonable
from doctor.version import __version__


@dataclass(frozen=True)
class LlamaCppRun:
    """One timed decode window of `tokens` tokens."""

    tokens: int
    tok_s_wall: float  # the probe's own clock around each llama_decode + logits read
    tok_s_perf: float | None = None  # llama.cpp's llama_perf_context over the same window (None: llama-bench path)
    t_start_s: float | None = None  # the window on the sampler's clock (seconds since it started), so the NVML
    t_end_s: float | None = None  # samples of the decode itself are told from those of loading and prefill


@dataclass(frozen=True)
class LlamaCppProbe:
    backend: str  # "llama-cpp-python" | "llama-bench"
    outcome: str  # ok | died-silently | error | timeout | not-installed
    model_path: str
    n_ctx: int = 0
    flash_attn: str = ""
    cache_type_k: str = "f16"
    cache_type_v: str = "f16"
    n_gpu_layers: int = -1
    warmup_tokens: int = 0
    runs: tuple[LlamaCppRun, ...] = ()
    dropped_runs: int = 0  # runs before the decode speed settled (more than settle_pct off the later median)
    median_tok_s: float | None = None
    spread_pct: float | None = None  # (max - min) / median of the kept runs
    wall_vs_perf_pct: float | None = None  # the probe's clock against llama.cpp's counters, median of runs
    buffers_mib: dict[str, dict[str, float]] = field(default_factory=dict)  # "model"/"kv"/"compute" -> device -> MiB
    offloaded: str = ""  # "offloaded 65/65 layers to GPU" as llama.cpp logged it
    gpu_sm_clock_mhz: float | None = None  # median while decoding (NVML)
    gpu_util_pct: float | None = None
    gpu_memory_used_mib: float | None = None  # max while loaded
    gpu_samples: int = 0
    returncode: int | None = None
    error: str = ""  # one line: why it stopped
    log_tail: str = ""  # the engine's last log lines (a silent death's only evidence)
    seconds: float = 0.0
    asked_runs: int = 0  # the runs asked for; more were run while their spread stayed over the settle line
    gpu_mem_clock_mhz: float | None = None  # median while decoding (NVML)
    gpu_decode_samples: int = 0  # NVML samples inside the timed windows (the medians above are over these)
    shape: GgufShape | None = None  # the GGUF's header, read when it was probed: the verdict's ceiling on a replay
    weights: GgufWeights | None = None
    env: dict[str, str] = field(default_factory=dict)  # the engine's environment switches (GGML_CUDA_*) it ran with
    synthetic: str = ""  # what the synthetic model was, when the doctor wrote it


@dataclass(frozen=True)
class TransformersProbe:
    """What the Transformers probe measured (doctor/probe/transformers.py): decode through HF Transformers, with
    bitsandbytes 4-bit (NF4) weights when bitsandbytes is installed, else FP16; the verdict is
    doctor/verdict/transformers.py."""

    backend: str  # "transformers+bitsandbytes" | "transformers"
    outcome: str  # ok | died-silently | error | timeout | not-installed
    model_path: str
    quant: str = ""  # "nf4" | "fp16"
    versions: dict[str, str] = field(default_factory=dict)  # transformers, bitsandbytes, torch
    layers: int = 0  # decoder layers of the model probed
    prompt_tokens: int = 0
    warmup_tokens: int = 0
    warmup_tok_s: float | None = None  # the first window, where first-use costs (autotune, per-shape graphs) show
    warmup_faults_per_token: float | None = None
    runs: tuple[LlamaCppRun, ...] = ()  # tok_s_perf: CUDA events around the same window (the second clock)
    faults_per_token: tuple[float, ...] = ()  # minor page faults per decode token, per timed run
    dropped_runs: int = 0
    median_tok_s: float | None = None
    spread_pct: float | None = None
    wall_vs_perf_pct: float | None = None  # the probe's clock against the CUDA events, median of runs
    bytes_per_token: int | None = None  # GPU weight bytes read per decode token (every tensor on the card but the
    # embedding table, of which one row is read), measured on the loaded model
    gpu_weight_bytes: int | None = None  # every parameter and buffer on the card
    gpu_sm_clock_mhz: float | None = None
    gpu_util_pct: float | None = None
    gpu_memory_used_mib: float | None = None
    gpu_samples: int = 0
    returncode: int | None = None
    error: str = ""
    log_tail: str = ""
    seconds: float = 0.0
    timing: str = "generate()"  # what each window times: generate() with a streamer, as users run it
    asked_runs: int = 0
    gpu_mem_clock_mhz: float | None = None
    gpu_decode_samples: int = 0
    synthetic: str = ""


@dataclass(frozen=True)
class EngineMeasurement:
    """One engine measured by the doctor on its synthetic model of the same layer shape, in that engine's format
    (probe --compare-engines): what the engine gap reads as "measured"."""

    engine: str  # exllamav2 | llama.cpp | transformers
    format: str  # "Q4_K_M GGUF", "4-bit GPTQ", "bitsandbytes NF4", "FP16"
    outcome: str  # ok | error | timeout | died-silently | not-installed
    tok_s: float | None = None
    bytes_per_token: int | None = None  # GPU bytes read per decode token in this format
    label: str = ""  # the synthetic model, in words
    error: str = ""


@dataclass(frozen=True)
class ServerProbe:
    """What the probe of a running engine server measured (doctor/probe/served/: --engine-url): decode timed by the
    server's own counters where it gives them (Ollama's eval_count / eval_duration, llama-server's `timings`), else by
    the wall clock between the first and the last streamed token; what the server says it has loaded. Judged by
    doctor/verdict/served.py."""

    backend: str  # "Ollama 0.12.3 (/api/generate)", "llama-server (/v1/completions)"
    outcome: str  # ok | unreachable | timeout | bad-answer | wrong-api | no-model | error
    url: str
    flavour: str = ""  # ollama | llama-server | vllm | tabbyapi | lm-studio | openai-compatible
    model: str = ""  # the model timed, as the server names it
    model_path: str = ""  # where the server says the model's file is (llama-server /props), if it says
    clock: str = ""  # "server" (its own decode counters) | "wall" (streamed tokens, first to last)
    runs: tuple[LlamaCppRun, ...] = ()  # tok_s_wall: the figure used; tok_s_perf: the server's own, where given
    dropped_runs: int = 0
    median_tok_s: float | None = None
    spread_pct: float | None = None
    wall_vs_perf_pct: float | None = None
    asked_runs: int = 0
    prompt_tokens: int = 0
    prompt_tok_s: float | None = None  # prefill, from the server's own counters
    tokens: int = 0  # decode tokens asked per run
    warmup_s: float | None = None  # the first request, which loads the model when it was not loaded
    model_bytes: int | None = None  # the weights' size as the server reports it (Ollama /api/tags, llama-server meta)
    resident_bytes: int | None = None  # what the loaded model takes in all (Ollama /api/ps `size`)
    vram_bytes: int | None = None  # of which in VRAM (Ollama /api/ps `size_vram`): less = layers left on the CPU
    n_ctx: int | None = None  # the context it runs with (Ollama num_ctx / context_length, llama-server n_ctx)
    parameters: dict[str, str] = field(default_factory=dict)  # Ollama's PARAMETER lines (num_gpu, num_ctx, ...)
    details: dict[str, str] = field(default_factory=dict)  # quantization_level, parameter_size, max_model_len, ...
    local: bool = False  # the server is on this host: NVML samples below are its GPU's
    gpu_sm_clock_mhz: float | None = None
    gpu_mem_clock_mhz: float | None = None
    gpu_util_pct: float | None = None
    gpu_memory_used_mib: float | None = None
    gpu_samples: int = 0
    gpu_decode_samples: int = 0
    error: str = ""  # one line: what went wrong, and the fix
    log_tail: str = ""  # the start of a server answer that was not what the API promises (the evidence)
    seconds: float = 0.0
    synthetic: str = ""  # never: the server's own model is timed

    @property
    def input_error(self) -> bool:
        """The server could not be asked (a bad URL, refused, timed out, not JSON, not an engine's API): the user's
        input to fix, exit 3, as a --model that names nothing."""
        return self.outcome in INPUT_OUTCOMES


INPUT_OUTCOMES = frozenset({"unreachable", "timeout", "bad-answer", "wrong-api", "no-model"})


ENGINE_PROBE_SCHEMA = "v100-doctor/engine-probe/1"  # doctor/schema/engine-probe-1.json


def engine_probe_document(kind: str, **parts: object) -> dict:
    """The JSON of the engine probes that stand outside a report (`probe --compare-engines` with ExLlamaV2 in force,
    the dev tools `python3 -m doctor.probe.llamacpp` and `doctor.probe.engine_gap`), under a schema of its own:
    `kind` says which, the parts are EngineMeasurement / LlamaCppProbe / TransformersProbe / EngineGap as JSON."""
    return {"schema": ENGINE_PROBE_SCHEMA, "doctor_version": __version__, "kind": kind,
            **{name: to_jsonable(value) for name, value in parts.items()}}
