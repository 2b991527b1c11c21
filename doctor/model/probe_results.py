"""What the probe measured, as plain dataclasses that serialize into Report.probe.

Every run is kept (llama-bench style): a median alone hides a slow first window. Host-side
figures (process CPU time / wall time, page faults per token) are always recorded beside the
speed: they are how a host-bound state is told apart from the card's real speed.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from doctor.model.engine_probe import EngineMeasurement, LlamaCppProbe, ServerProbe, TransformersProbe
from doctor.model.ids import FailureKind
from doctor.model.samples import SampleSeries
from doctor.model.streams import StreamsProbe
from doctor.model.unknown import Maybe, Unknown

NOT_MEASURED = Unknown("not measured")


@dataclass(frozen=True)
class DecodeRun:
    """One timed window of greedy single-token decode steps (EOS never stops it)."""

    run: int
    tokens: int
    seconds: float
    tok_s: float
    past_len: int  # tokens already in the cache when the window started
    cpu_s: float  # the worker's user+system CPU time over the window
    cpu_wall: float  # cpu_s / seconds: 1.0 = one core busy all the time
    minor_faults: int
    major_faults: int
    t_start_s: float = 0.0  # seconds since the worker started (to align with the NVML samples)
    t_end_s: float = 0.0
    involuntary_switches: int = 0  # the worker preempted during the window (doctor/probe/hostnoise.py)
    steal_pct: float = 0.0  # hypervisor steal, % of all CPU time during the window (/proc/stat)
    cpu_mhz: float = 0.0  # mean CPU clock at the window's end
    busy_others: tuple[str, ...] = ()  # other processes using CPU during the window

    @property
    def faults_per_token(self) -> float:
        return (self.minor_faults + self.major_faults) / max(self.tokens, 1)


@dataclass(frozen=True)
class DecodePass:
    """Warm-up plus timed runs on one load of the model."""

    index: int  # 1 = first load in the worker, 2 = independent second load
    load_s: float
    warmup_tokens: int
    warmup_s: float
    runs: tuple[DecodeRun, ...] = ()
    flag: str = ""  # why this pass looks like a host-bound state rather than the card's speed ("" = fine)
    warmup_cpu_s: float = 0.0  # the worker's CPU time over the warm-up
    warmup_faults: int = 0  # minor + major page faults over the warm-up
    first_use: str = ""  # the warm-up (each context length met for the first time) was far slower than the runs
    window: int = 0  # the last `window` runs are the settled window the speed is taken from (0: all runs)
    unsettled: str = ""  # the runs never settled within the time budget: their spread and its measured cause
    fix_tok_s: float = 0.0  # decode at lengths never met before, with the first-use fix applied (0: not measured)
    fix_what: str = ""  # which fix fix_tok_s was measured with

    @property
    def timed(self) -> tuple[DecodeRun, ...]:
        return self.runs[-self.window:] if self.window else self.runs

    @property
    def warmup_tok_s(self) -> float:
        return self.warmup_tokens / self.warmup_s if self.warmup_s else 0.0

    @property
    def warmup_faults_per_token(self) -> float:
        return self.warmup_faults / self.warmup_tokens if self.warmup_tokens else 0.0

    @property
    def median_tok_s(self) -> float:
        return statistics.median(r.tok_s for r in self.timed) if self.runs else 0.0

    @property
    def spread_pct(self) -> float:
        """(max - min) / median of the settled window's runs, in percent."""
        if len(self.timed) < 2 or not self.median_tok_s:
            return 0.0
        speeds = [r.tok_s for r in self.timed]
        return 100.0 * (max(speeds) - min(speeds)) / self.median_tok_s

    @property
    def faults_per_token(self) -> float:
        return statistics.median(r.faults_per_token for r in self.runs) if self.runs else 0.0

    @property
    def cpu_wall(self) -> float:
        return statistics.median(r.cpu_wall for r in self.runs) if self.runs else 0.0


@dataclass(frozen=True)
class PrefillResult:
    tokens: int
    seconds: tuple[float, ...]  # one per repetition, cache reset in between

    @property
    def tok_s(self) -> float:
        return self.tokens / statistics.median(self.seconds) if self.seconds else 0.0


@dataclass(frozen=True)
class BandwidthResult:
    """A large device-to-device copy: bytes read plus bytes written per second."""

    gbs: float  # 1e9 bytes per second, read + write counted
    buffer_bytes: int
    iterations: int
    seconds: float
    method: str = "torch copy_ between two device buffers, timed with CUDA events"


@dataclass(frozen=True)
class ModelShape:
    """What ExLlamaV2 itself reports about the loaded model (not re-derived from files)."""

    architecture: str
    format: str  # exl2 | gptq | fp16 | mixed
    layers: int
    hidden_size: int
    kv_heads: int
    head_dim: int
    vocab_size: int
    bpw: Maybe[float] = NOT_MEASURED  # EXL2: quantization_config.bits; else bits per weight measured from GPU bytes
    act_order: Maybe[bool] = NOT_MEASURED  # GPTQ only: a non-trivial g_idx
    quantized_params: Maybe[int] = NOT_MEASURED


@dataclass(frozen=True)
class MemoryUse:
    weight_bytes_gpu: int  # bytes of weights on the GPU(s): read once per decoded token
    weight_bytes_cpu: int  # the token embedding, which ExLlamaV2 always keeps in system RAM
    cache_bytes: int  # what the KV cache allocated (ExLlamaV2's footprint())
    kv_bytes_per_token: float  # KV bytes stored per token over all layers, in this cache mode
    peak_allocated_mib: float  # torch.cuda.max_memory_allocated over the probe
    reserved_mib: float  # torch.cuda.memory_reserved after load
    device_total_mib: float
    offloaded_bytes: int = 0  # weights outside VRAM that cross PCIe each token (ExLlamaV2: none)


@dataclass(frozen=True)
class ProbeResult:
    engine: str  # "exllamav2 0.3.2"
    torch: str  # "2.11.0+cu130"
    device_name: str
    compute_capability: str
    model_path: str
    shape: ModelShape
    memory: MemoryUse
    max_seq_len: int
    max_seq_len_source: str  # "--max-seq-len" | "default: ..." (why this value)
    cache_mode: str
    split: str  # "autosplit" | "gpu_split 16.0"
    attention: str  # flash-attn | xformers | torch SDPA | matmul
    prompt_tokens: int
    prefill: PrefillResult
    passes: tuple[DecodePass, ...]
    reported_pass: int  # the pass whose median is this probe's decode speed
    bandwidth: BandwidthResult | None = None
    synthetic: str = ""  # what the synthetic model was, when --synthetic
    phase_seconds: dict[str, float] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def pass_(self, index: int) -> DecodePass | None:
        return next((p for p in self.passes if p.index == index), None)

    @property
    def reported(self) -> DecodePass:
        return self.pass_(self.reported_pass) or self.passes[0]

    @property
    def decode_tok_s(self) -> float:
        return self.reported.median_tok_s

    @property
    def context_tokens(self) -> int:
        """The mean past length over the reported timed runs (KV reads depend on it)."""
        runs = self.reported.runs
        return int(sum(r.past_len + r.tokens / 2 for r in runs) / len(runs)) if runs else self.prompt_tokens


@dataclass(frozen=True)
class PhaseWindow:
    """When a phase ran, in seconds on the sampler's clock (so samples can be matched to runs)."""

    phase: str
    start_s: float
    end_s: float
    pass_index: int = 1


@dataclass(frozen=True)
class ProbeReport:
    """Report.probe: how the probe ended, what it measured, and what the sampler saw meanwhile."""

    status: str  # ok | failed | timeout | cancelled | crashed | skipped
    summary: str  # one line for people
    model_path: str = ""
    synthetic: str = ""  # what the synthetic model was (empty for the user's model)
    result: ProbeResult | None = None
    error_kind: FailureKind | str = ""  # "" when it did not fail; plain text only from a newer doctor's report
    error_phase: str = ""
    error_detail: str = ""  # the log or traceback tail
    samples: SampleSeries | None = None  # NVML and host readings over the timed phases
    windows: tuple[PhaseWindow, ...] = ()
    seconds: float = 0.0
    interrupted_by: int = 0  # the signal that cancelled it (15 SIGTERM, 1 SIGHUP); 0: Ctrl-C, a cancel, or none
    # the engine probed: "" is ExLlamaV2 (the doctor's own probe, `result`); the engines' own probes keep what they
    # measured beside it (doctor/probe/llamacpp.py, transformers.py), judged by doctor/verdict/engine_probe.py
    engine: str = ""  # "" | "llama.cpp" | "ollama" | "transformers" | "vllm"
    llamacpp: tuple[LlamaCppProbe, ...] = ()  # llama-cpp-python's run, and llama-bench's after a silent death
    transformers: TransformersProbe | None = None
    server: ServerProbe | None = None  # --engine-url: a running engine server, timed through its API
    measurements: tuple[EngineMeasurement, ...] = ()  # --compare-engines: the other engines on the same shape
    asked: bool = False  # `probe` asked for it: an engine's probe that could not run is a failure, not a skip
    streams: StreamsProbe | None = None  # `probe --streams`: N concurrent streams against a running server

    @property
    def ok(self) -> bool:
        """The ExLlamaV2 probe measured (an engine's own probe is `of_engine`, its verdict Report.engine_verdict)."""
        return self.status == "ok" and self.result is not None

    @property
    def of_engine(self) -> bool:
        """An engine's own probe (llama.cpp, Transformers, a server) rather than the ExLlamaV2 probe."""
        return self.server is not None or (bool(self.engine) and self.engine not in ("exllamav2", "tabbyapi"))
