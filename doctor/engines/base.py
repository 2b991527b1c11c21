"""The one interface every engine answers (Harlequin's adapter pattern): a check, the log scanner, the plan and the
verdict ask the engine in force, and never branch on engine names.

An adapter is pure: it reads the gathered Facts and the knowledge tables, never the machine. An engine's machine
reads live in the gatherers (doctor/facts/) and its timed probe in doctor/probe/.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from doctor.engines import architecture
from doctor.engines.judgement import Judgement
from doctor.knowledge.attention import FLASH_ATTN_COMMANDS, card_is, flash_attn_fix
from doctor.knowledge.engines import LLAMA_CPP_FA_OFF_DECODE, EngineSupport, cc_tuple
from doctor.model.engines import CudaLibrary, EngineLaunch
from doctor.model.facts import Facts
from doctor.model.findings import Status
from doctor.model.ids import Engine
from doctor.model.quant_plan import QuantCandidate
from doctor.model.unknown import Maybe, Unknown

__all__ = ["CudaBuild", "DriverFloor", "EngineAdapter", "FixVocabulary", "Judgement", "PlanRun", "PlanSetup"]

# the parts of the CUDA stack (checks/prescription/problems.py KINDS subjects) an engine runs on
DRIVER_ONLY = frozenset({"driver"})
TORCH_STACK = frozenset({"driver", "torch", "environment"})
JIT_STACK = TORCH_STACK | {"nvcc", "build"}
UNQUANTIZED = ("f16", "f32", "bf16")  # K/V cache types that are not quantized


@dataclass(frozen=True)
class FixVocabulary:
    """The words a fix uses for this engine: where its settings live and how each is spelled there. A template's
    `{n}` / `{type}` is filled by the fix that uses it; None: the engine has no such setting."""

    settings_live_in: str  # "llama-server's command line", "the Ollama server's environment and the model's Modelfile"
    context: str  # how the context length is set: "-c {n}", "PARAMETER num_ctx {n}", "max_seq_len: {n}"
    gpu_layers: str | None = None  # how many layers go to the GPU: "-ngl {n}", "PARAMETER num_gpu {n}"
    kv_cache: str | None = None  # a quantized K/V cache: "-ctk {type} -ctv {type} -fa on", "cache_mode: {type}"
    smaller_model: str = "a smaller quant of the model"  # what a user of this engine downloads instead
    restart: str = ""  # what makes a changed setting take effect ("restart the server")
    fast_format: str = ""  # the quant to get for this engine's fast path, as a sentence
    fp16_weights: str | None = None  # how it is told to run BF16 weights as FP16 below cc 8.0 (a command or a comment)
    flash_attn_on: str | None = None  # how its own flash attention is switched on: "-fa on (or leave -fa auto)"
    fast_decode: str | None = None  # the settings of its fast single-stream decode, for a server timed below its share

    def fewer_bytes(self, n_ctx: int | None = None) -> str:
        """What lowers this engine's memory: a shorter context, a quantized K/V cache, a smaller quant."""
        ctx = self.context.format(n=max(2048, n_ctx // 2) if n_ctx else 4096)
        kv = f", a q8_0 K/V cache ({self.kv_cache.format(type='q8_0')})" if self.kv_cache else ""
        return f"a shorter context ({ctx}){kv}, or {self.smaller_model}"


@dataclass(frozen=True)
class CudaBuild:
    """The engine's own CUDA code on this machine (not torch's): the ggml libraries read from its install."""

    installed: bool
    libraries: tuple[CudaLibrary, ...]
    what: str  # "llama.cpp (llama-server)", "llama-cpp-python 0.3.16", "Ollama 0.33.0"
    owner: str = ""  # whose runners the libraries are, when not the engine's own name ("LM Studio"); "": its label
    runner_word: str = "runner"  # what one library is called after its runner's name ("": the name says it)
    not_cuda: str = ""  # it runs the card without CUDA code of its own (LM Studio's Vulkan runtime): why, in words


@dataclass(frozen=True)
class DriverFloor:
    """The oldest driver branch the engine's bundled CUDA runtime accepts on this card."""

    branch: int
    summary: str  # what happens below it, with the engine's version
    source: str


@dataclass(frozen=True)
class PlanSetup:
    """How `plan` lays out this engine's rows: which versions it runs, its cache settings, and whose arithmetic its
    memory and speed follow ("exllamav2", "llama.cpp": the doctor's budgets for those engines, which it runs on;
    "torch": weights, K/V and the CUDA context, no engine buffers modelled)."""

    formats: tuple[str, ...]  # candidate formats (QuantCandidate.fmt) it plans
    caches: tuple[str, ...]  # its K/V cache settings, the best quality first
    arithmetic: str  # "exllamav2" | "llama.cpp" | "torch"
    batched: bool = True  # the plan's batched-decode and draft estimates apply (doctor/plan/concurrency.py)
    memory_share: float = 1.0  # the share of the card the engine allows itself (vLLM: --gpu-memory-utilization)
    splits: bool = True  # planned over several cards (False: single-card rows only)
    speed: str = ""  # torch engines: "bnb-nf4" (the measured Transformers + bitsandbytes cost) or "assumed" (none measured)
    note: str = ""  # one sentence the plan adds when the engine has rows
    offload: bool = False  # its versions also get the partial-offload rows (doctor/plan/offload.py: llama.cpp's flags)
    # the commands of one row (EngineAdapter.plan_steps); None: none, or the adapter words them itself (vLLM)
    steps: Callable[[PlanRun], tuple[tuple[str, str], ...]] | None = None


@dataclass(frozen=True)
class PlanRun:
    """What one plan row launches, as the engine's commands need it."""

    option: QuantCandidate
    base_repo: str | None  # the Hub repo whose shape is planned (the weights a converter starts from)
    context: int
    cache: str
    split_gib: tuple[float, ...] | None  # per GPU, for a split over several; None: one GPU
    draft: str | None  # a draft model's Hub id
    cc: str  # the (first) card's compute capability
    yarn: tuple[float, int] | None = None  # (factor, trained length): the context is past training (context_window)


class EngineAdapter:
    """What every engine answers. Subclasses set the class attributes and override what differs."""

    id: Engine
    label: str  # how its users name it: "llama.cpp (llama-server, llama-cpp-python, LM Studio)"
    formats: tuple[str, ...]  # the model formats it loads (doctor/knowledge/formats.py keys)
    uses_torch: bool  # runs on PyTorch: the driver/CUDA/PyTorch pairing and torch's kernels matter
    uses_exllamav2: bool = False  # runs ExLlamaV2's extension: its JIT build and its import matter
    fp16_kernels: bool  # decode does its math in FP16, so a card with slow FP16 (Pascal 1:64) crawls
    efficiency_key: str  # its row in doctor/knowledge/engine_efficiency.py ("exllamav2", "llama.cpp", "transformers")
    vocabulary: FixVocabulary
    format_runtimes: tuple[str, ...] = ()  # its names in doctor/knowledge/formats.py's runtime column
    # how it meets the flash-attn package: "calls" (installed means called, ExLlamaV2), "opt-in" (only when asked,
    # Transformers' attn_implementation), "own" (its own attention kernels; the package is never used)
    flash_attn_use: str = "own"
    flash_attn_note: str = ""  # "own" / "opt-in": one sentence on what it uses instead
    # what it does with a quantized V cache and its flash attention off: "refuses" the context (llama.cpp), "ignores"
    # the cache type and keeps f16 (Ollama); "" where it has no such setting
    quant_v_without_fa: str = ""
    auto_offload: bool = False  # with no GPU-layer count set, it puts only the layers that fit on the GPU itself
    pins_torch: bool = False  # its wheel is compiled against one torch: a torch without the card's kernels is fixed
    # by the engine's version (judge_card's fix), not by swapping torch under it
    support: tuple[EngineSupport, ...] = ()  # its support table: the oldest card each version runs on, with sources
    # (its package's support.py)

    # its rows in doctor/knowledge/architectures.py ("": the doctor keeps none), whether it names a model by the GGUF's
    # general.architecture (llama.cpp, Ollama) rather than config.json's architectures, and its pip name
    arch_table: str = ""
    arch_from_gguf: bool = False
    arch_package: str = ""
    versioned: str = ""  # what installed_version is the version of, when not the engine itself ("llama-cpp-python")

    def installed_version(self, facts: Facts) -> Maybe[str]:
        """Its version on this machine, as gathered (an engine with a pip name: its package's); Unknown with the reason
        when the doctor cannot read it."""
        if self.arch_package:
            return facts.python.packages.get(self.arch_package, Unknown(f"{self.arch_package} is not installed here"))
        return Unknown(f"the doctor does not read {self.label}'s version")

    def judge_architecture(self, arch: str, facts: Facts) -> Judgement:
        """Whether its installed version loads this architecture (doctor/engines/architecture.py's one rule)."""
        if not self.arch_table:
            return Judgement(Status.INFO, f"unknown: the doctor keeps no architecture list for {self.label}",
                             evidence={"architecture": arch, "engine": str(self.id)})
        return architecture.judge(self.arch_table, self.label.split(" (")[0], arch, self.installed_version(facts), self.arch_package,
                     self.versioned)

    @property
    def cuda_stack(self) -> frozenset[str]:
        """The parts of the CUDA stack this engine runs on: the driver always; torch for engines on PyTorch; nvcc and
        ninja for ExLlamaV2's JIT build."""
        return JIT_STACK if self.uses_exllamav2 else TORCH_STACK if self.uses_torch else DRIVER_ONLY

    def cuda_build(self, facts: Facts) -> CudaBuild | None:
        """Its own CUDA libraries as installed here; None: its kernels come with torch or its wheel (judged elsewhere)."""
        return None

    def vocabulary_for(self, flavour: str) -> FixVocabulary:
        """The words of a front end with settings of its own (LM Studio's load settings), else the engine's."""
        return self.vocabulary

    def rebuild_for_card(self, cc: str, facts: Facts) -> tuple[str, tuple[str, ...]]:
        """(fix, commands) that give this engine code for the card, in its own build's terms."""
        return "", ()

    def driver_floor(self, cc: str, facts: Facts) -> DriverFloor | None:
        """The driver branch its bundled CUDA runtime needs on this card; None: the driver is judged by torch's CUDA."""
        return None

    def flash_attn_refusal(self, cc: str | None = None, card_name: str | None = None) -> tuple[str, tuple[str, ...]]:
        """(fix, commands) for "FlashAttention only supports Ampere GPUs or newer" (flash-attn 2 on a card below cc
        8.0) in this engine's terms: the check, the probe's failure and `explain` can all print it."""
        card = card_is(cc, card_name) if cc else "this card is older than Ampere"
        if self.flash_attn_use == "calls":
            return flash_attn_fix(None, cc, card_name=card_name), FLASH_ATTN_COMMANDS
        if self.flash_attn_use == "opt-in":
            return (f"flash-attn 2 needs cc 8.0+; {card}. {self.flash_attn_note}: load the model with "
                    "attn_implementation=\"sdpa\" (the default), not \"flash_attention_2\"; or uninstall flash-attn.",
                    (FLASH_ATTN_COMMANDS[0],))
        return (f"flash-attn 2 needs cc 8.0+; {card}. {self.flash_attn_note}, so the error came from another program in "
                "this environment: uninstall flash-attn there.", (FLASH_ATTN_COMMANDS[0],))

    def launch_in_force(self, launch: EngineLaunch, facts: Facts) -> EngineLaunch:
        """The launch settings as the engine will run them: its server's environment under the user's settings."""
        return launch

    def launch_notes(self, launch: EngineLaunch, cc: str | None) -> tuple[Judgement, ...]:
        """What its launch settings cost on this card by its own rules (a setting it refuses, ignores or no longer
        honours, a fast path switched off), each with its fix in the engine's own words; () when none does. The
        engine-launch check prints them and judges the GPU-layer count itself."""
        return ()

    def flash_attn_off(self, launch: EngineLaunch, cc: str | None) -> Judgement | None:
        """Its own (ggml) flash attention switched off on a card it runs on: decode slower, measured."""
        if launch.flash_attn != "off" or cc is None or cc_tuple(cc) < (7, 0) or self.vocabulary.flash_attn_on is None:
            return None
        factor, src = LLAMA_CPP_FA_OFF_DECODE
        return Judgement(Status.WARN, f"flash attention is off: {self.label}'s own kernels run on cc {cc}; "
                         f"measured off vs on: decode x{factor:.2f} slower at a short context, more at a long one",
                         self.vocabulary.flash_attn_on, evidence={"flash_attn_source": src})

    def kept_off_gpu(self, facts: Facts) -> Judgement | None:
        """A setting in the engine's environment that keeps every layer on the CPU whatever the card; None: none."""
        return None

    def judge_card(self, cc: str, card_name: str, facts: Facts) -> Judgement:
        """Whether this engine (at today's versions, or the version installed) runs on this card, and how."""
        raise NotImplementedError

    def judge_format(self, fmt: str, cc: str) -> Judgement | None:
        """The engine's word on a model format; None: the generic format check decides."""
        if fmt in self.formats:
            return None
        return Judgement(Status.FAIL, f"{self.label} does not load {fmt} models (it loads {', '.join(self.formats)})")

    # -- plan (before the download): None, the engine has no rows in a plan
    plan: PlanSetup | None = None

    def plan_takes(self, option: QuantCandidate) -> bool:
        """Whether the plan gives this version a row on this engine."""
        return self.plan is not None and option.fmt in self.plan.formats

    def plan_card(self, cc: str, option: QuantCandidate) -> tuple[bool, str]:
        """(whether a release of the engine runs this version on this card, which release and how to get it: "" for
        the current one). The plan's rows for a card the engine no longer supports name the last release that does."""
        return True, ""

    def plan_steps(self, run: PlanRun) -> tuple[tuple[str, str], ...]:
        """The commands of one row, in order: (step, text). A step named "config" is a YAML file, any other a shell
        command line; each runs as printed, and the files one step writes are the files the next one reads."""
        return self.plan.steps(run) if self.plan is not None and self.plan.steps is not None else ()

    def __repr__(self) -> str:
        return f"<engine {self.id}>"
