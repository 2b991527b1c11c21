"""Error signatures seen in real logs: the text, the pitfall (a check id) behind it, the fix, and where it was reported.

`v100-doctor explain` matches these against a pasted log. Each row is data: the regex, a literal
`anchor` that every matching line contains (the streaming scanner looks for anchors first, so a
2 GB log is never run through every regex), the check ids that can confirm the pitfall on a
machine, and the public issue (or, where no issue quotes it, the source line) that shows the text.

Named groups become numbers in the match. A group name's suffix says how to read it:
`_mib` a size such as "2.00 GiB" (turned into MiB), `_cc` a compute capability in any spelling
("sm_70", "70", "compute_70", "7.0" -> "7.0"), `_cudaint` a CUDA version as torch prints it
("11040" -> "11.4"). Other groups stay text (whole numbers become ints).
Confidence: P = the text is quoted from the issue or source at the URL; S = a user report.

The same table tells the probe why it died: a row's `probe_kind` names the failure kind
(doctor/verdict/failures.py turns it into a finding) that its text means in an exception.
Rows with `in_logs=False` are read only on an exception's text: they are too broad for a
whole log, where a neighbouring line explains the failure better.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from doctor.knowledge.attention import FLASH_ATTN_COMMANDS, flash_attn_fix
from doctor.knowledge.cuda import MVC, NVCC_GCC_SUMMARY
from doctor.knowledge.engine_signatures import ENGINE_SIGNATURE_ROWS
from doctor.knowledge.engines import TRITON
from doctor.knowledge.hardware import DEVICE_HANDLE_SOURCE, FALLEN_OFF_BUS_SOURCE, GPU_LOST_COMMANDS, GPU_LOST_FIX
from doctor.knowledge.messages import JIT_BUILD_FIX, MODEL_FOLDER_FIX, OOM_FIX, PROBE_ENGINE_INSTALL
from doctor.knowledge.xid import XID_CATALOGUE, XID_ROWS_ELSEWHERE, XIDS
from doctor.model.ids import CheckId, FailureKind

# The probe's failure kinds that rows of this table recognise, in priority order: when an exception's text
# matches rows of several kinds, the first kind here names it ("FlashAttention only supports" beats the OOM it may cause).
PROBE_KINDS = (FailureKind.FLASH_ATTN, FailureKind.NO_KERNEL_IMAGE, FailureKind.JIT_BUILD, FailureKind.OOM,
               FailureKind.NOT_INSTALLED, FailureKind.MODEL_LOAD)

SEVERITIES = ("error", "warning", "info")
# faults several engines print in their own words or share (a CUDA OOM, a build without the card's kernels): each engine's
# fix for them lives with the engine (doctor/engines/<engine>/log.py)
FIX_CLASSES = ("oom", "no-kernel", "driver", "no-gpu", "cpu-build", "gpu-unused", "partial-offload", "flash-attn", "bf16",
               "cuda-runtime-missing")  # error: the run failed here; warning: a trap that will bite; info: explains behaviour


@dataclass(frozen=True)
class Signature:
    id: str
    engine: str
    anchor: str | tuple[str, ...]  # lower-case literal(s): every line the pattern matches holds one of them
    pattern: str
    checks: tuple[CheckId, ...]  # pitfall ids, the first is the pitfall's name; any may confirm it
    title: str
    fix: str
    source: str
    confidence: str
    severity: str = "error"
    commands: tuple[str, ...] = ()
    followup: str = ""  # regex for more numbers on the next `followup_lines` lines (multi-line messages)
    followup_lines: int = 0
    rules_out_on_pass: bool = True  # does a passing check mean this pitfall is not the cause here?
    pass_note: str = ""  # what a passing check leaves open
    # (check id, evidence key): a passing finding whose evidence says False there still has the pitfall (a card's
    # limit that the check notes without warning, e.g. compute-capability's "triton" below cc 7.0); True rules it out
    confirmed_by_evidence: tuple[CheckId, str] | tuple[()] = ()
    probe_kind: FailureKind | None = None  # the probe failure kind this text means (PROBE_KINDS); None: never stops a probe
    in_logs: bool = True  # False: recognised only in a probe's exception text, never in `explain`'s logs
    # a class of fault several engines share (FIX_CLASSES): `explain` words its fix in the terms of the engine the log
    # shows (doctor/engines/<engine>/log.py), a neutral fix when the log names none; "": the row's own fix always
    fix_class: str = ""
    # signature ids this message follows from: when one of them is in the same log, this one is shown under it, with
    # its fix (a knock-on effect, not a second pitfall)
    consequence_of: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # a pitfall id or a failure kind that does not exist raises here, when the table loads
        object.__setattr__(self, "checks", tuple(CheckId(c) for c in self.checks))
        if self.confirmed_by_evidence:
            check, key = self.confirmed_by_evidence
            object.__setattr__(self, "confirmed_by_evidence", (CheckId(check), key))
        if self.probe_kind is not None:
            object.__setattr__(self, "probe_kind", FailureKind(self.probe_kind))
            if self.probe_kind not in PROBE_KINDS:
                raise ValueError(f"signature {self.id}: {self.probe_kind} is not a kind the signature table names")
        if self.fix_class and self.fix_class not in FIX_CLASSES:
            raise ValueError(f"signature {self.id}: {self.fix_class!r} is not one of FIX_CLASSES")

    @property
    def check(self) -> CheckId:
        return self.checks[0]

    @property
    def anchors(self) -> tuple[str, ...]:
        return (self.anchor,) if isinstance(self.anchor, str) else self.anchor

    @property
    def regex(self) -> re.Pattern:
        return _compiled(self.pattern)

    @property
    def followup_regex(self) -> re.Pattern | None:
        return _compiled(self.followup) if self.followup else None


@lru_cache(maxsize=None)
def _compiled(pattern: str) -> re.Pattern:
    return re.compile(pattern, re.IGNORECASE)


SIZE = r"[\d.]+ ?[KMGT]i?B"
EXL2_REPO = "https://github.com/turboderp-org/exllamav2"
VLLM = "https://github.com/vllm-project/vllm"
QUANT_FIX = "Use a format this card runs: EXL2 with ExLlamaV2, or GPTQ with vLLM/ExLlamaV2."
BNB_INT8_FIX = ("On a card below cc 7.5 (P40, P100, V100) load in 4-bit (load_in_4bit, NF4) or, faster, use a "
                "quantized format an engine runs here: EXL2 with ExLlamaV2, or GGUF with llama.cpp.")
EXL3_FIX = ("This card cannot run ExLlamaV3/EXL3 (cc 8.0+; Turing at most experimental). Use an EXL2 quant with "
            "ExLlamaV2 (TabbyAPI: git checkout exl2-checkpoint, the last branch with ExLlamaV2), or a GGUF with llama.cpp.")
TORCH_FIX = ("Install a torch whose wheel ships kernels for this card: for a V100 (sm_70) torch 2.8-2.10 with cu126 or "
             "cu128, or any cu126 build; `v100-doctor --check cuda-pairing` prints the exact pip command for this "
             "machine's driver.")

# every GPU out-of-memory row: judged by the memory budget and the other processes on the card, it stops a probe as
# an OOM, and `explain` words its fix in the terms of the engine the log shows (fix class "oom")
OOM_CHECKS = (CheckId.MEMORY_BUDGET, CheckId.GPU_PROCESSES)


def gpu_oom(id: str, engine: str, anchor: str | tuple[str, ...], pattern: str, title: str, source: str, confidence: str,
            fix: str = OOM_FIX, **more: Any) -> Signature:
    """A GPU out-of-memory row: what every one shares is said here once."""
    return Signature(id, engine, anchor, pattern, OOM_CHECKS, title, fix, source, confidence, probe_kind=FailureKind.OOM,
                     fix_class="oom", **more)


SIGNATURES: tuple[Signature, ...] = (
    # --- torch wheel without kernels for this card ---------------------------------------------------------
    Signature(
        "no-kernel-image", "torch / CUDA runtime", "kernel image",
        r"no kernel image is available for execution on the device",
        (CheckId.CUDA_PAIRING,),
        "No compiled kernel for this GPU's architecture: the torch wheel (or a compiled extension) was built without it",
        TORCH_FIX, "https://github.com/vllm-project/vllm/issues/19185", "P",
        rules_out_on_pass=False,
        pass_note="torch itself has kernels for this card here, so the missing kernel is in another compiled extension "
                  "(exllamav2_ext, xformers, bitsandbytes, flash-attn) built without this card's arch; rebuild it with "
                  "TORCH_CUDA_ARCH_LIST set to this card's compute capability",
        probe_kind=FailureKind.NO_KERNEL_IMAGE,
        fix_class="no-kernel", consequence_of=("torch-capability-too-old", "torch-capability-not-compatible", "torch-capability-cc-list", "ggml-no-device-code")),
    Signature(
        "torch-capability-too-old", "torch", "capability",
        r"Found GPU(?P<gpu_index>\d+) (?P<gpu_name>.+?) which is of cuda capability (?P<card_cc>\d+\.\d+)",
        (CheckId.CUDA_PAIRING,),
        "torch warns that this card is older than every architecture its wheel was built for (torch 2.10 and older wording)",
        TORCH_FIX, "https://github.com/vllm-project/vllm/issues/19185", "P", severity="warning",
        followup=r"minimum cuda capability (?:supported by this library|that we support) is (?P<min_cc>\d+\.\d+)",
        followup_lines=3),
    Signature(
        "torch-capability-not-compatible", "torch", "capability",
        r"(?P<gpu_name>[\w .()-]+?) with CUDA capability (?P<card_cc>sm_\d+) is not compatible with the current PyTorch installation",
        (CheckId.CUDA_PAIRING,),
        "torch warns that its wheel has no kernels for this card's architecture",
        TORCH_FIX, "https://github.com/vllm-project/vllm/issues/21633", "P", severity="warning",
        followup=r"supports CUDA capabilities (?P<built_for>(?:(?:sm|compute)_\d+ ?)+)", followup_lines=2),
    Signature(
        "torch-capability-cc-list", "torch", "capability",
        r"Found GPU(?P<gpu_index>\d+) (?P<gpu_name>.+?) which is of compute capability \(CC\) (?P<card_cc>\d+\.\d+)",
        (CheckId.CUDA_PAIRING,),
        "torch (2.11+ wording) warns that none of the architectures in its wheel runs on this card",
        TORCH_FIX + " The CUDA versions this warning suggests can be wrong for 2.11: only cu126 still has sm_70 there.",
        "https://github.com/pytorch/pytorch/issues/182250", "P", severity="warning",
        followup=r"supports one of these CUDA versions: (?P<suggested_cuda>[\d., ]+\d)", followup_lines=10),
    Signature(
        "torch-maxwell-pascal-removed", "torch", "maxwell",
        r"Support for Maxwell and Pascal architectures is removed for CUDA (?P<cuda>\d+\.\d+)\+ builds",
        (CheckId.CUDA_PAIRING,),
        "torch's CUDA 12.8+ wheels dropped Maxwell and Pascal (P100, P40)",
        "Install a cu126 torch build: pip install torch --index-url https://download.pytorch.org/whl/cu126",
        "https://github.com/pytorch/pytorch/pull/158700", "P", severity="warning"),
    # --- attention kernels ----------------------------------------------------------------------------------
    Signature(
        "flash-attn-needs-ampere", "flash-attn", "flashattention",
        r"FlashAttention only supports (?:Ampere GPUs or newer|Turing, Ampere or Hopper GPUs)",
        (CheckId.FLASH_ATTN,),
        "flash-attn is installed and was called on a GPU older than it supports (FA2 needs cc 8.0+)",
        flash_attn_fix(), f"{EXL2_REPO}/issues/502", "P", commands=FLASH_ATTN_COMMANDS,
        probe_kind=FailureKind.FLASH_ATTN,
        fix_class="flash-attn"),
    Signature(
        "exllamav2-flash-attn-unsupported-gpu", "exllamav2", "flash attention",
        r"Flash Attention is installed but unsupported GPUs were detected",
        (CheckId.FLASH_ATTN,),
        "ExLlamaV2 saw flash-attn on a GPU it cannot run on, warned, and will still call it",
        flash_attn_fix(), f"{EXL2_REPO}/issues/502", "P", severity="warning", commands=FLASH_ATTN_COMMANDS),
    Signature(
        "paged-attention-needs-flash-attn", "exllamav2", "flash attention",
        r"Paged attention required Flash Attention (?P<min_version>[\d.]+) or later",
        (CheckId.FLASH_ATTN,),
        "ExLlamaV2's dynamic generator defaults to paged attention, which needs flash-attn 2.5.7+ (and so an Ampere+ GPU)",
        "Create the generator with paged=False (batch size 1), or in TabbyAPI let it fall back to compatibility mode; "
        "on a V100 flash-attn cannot be the fix.",
        "https://github.com/theroyallab/tabbyAPI/issues/120", "P"),
    Signature(
        "tabbyapi-compatibility-mode", "TabbyAPI", ("unsupported gpu", "parallel batching", "compatability mode"),
        r"An unsupported GPU is found in this configuration\. Switching to compatibility mode"
        r"|This disables parallel batching and features that rely on it"
        r"|To disable compatab?ility mode, all GPUs must be ampere",
        (CheckId.FLASH_ATTN,),
        "TabbyAPI found a pre-Ampere GPU and turned off flash-attn and paged batching (expected on a V100)",
        "Nothing to fix for a single user; batching needs an Ampere+ GPU.",
        f"{EXL2_REPO}/issues/502", "P", severity="info", rules_out_on_pass=False,
        pass_note="TabbyAPI does this on every pre-Ampere GPU, with or without flash-attn; expected on a V100"),
    Signature(
        "dynamic-generator-8bit-cache", "exllamav2", "8-bit cache",
        r"Dynamic generator does not currently work with 8-bit cache",
        (CheckId.MEMORY_BUDGET,),
        "The FP8 cache (ExLlamaV2Cache_8bit) cannot be used with the dynamic generator",
        "Use a Q8, Q6 or Q4 cache (ExLlamaV2Cache_Q8/Q6/Q4; TabbyAPI cache_mode: Q8) or FP16; Q8 keeps almost FP16 "
        "quality at about half the memory.",
        f"{EXL2_REPO}/blob/master/exllamav2/generator/dynamic.py", "P", rules_out_on_pass=False,
        pass_note="the memory budget does not judge which generator the code uses; this is a code/config choice"),
    # --- memory ---------------------------------------------------------------------------------------------
    gpu_oom(
        "cuda-oom", "torch", "out of memory",
        rf"CUDA out of memory\. Tried to allocate (?P<tried_mib>{SIZE})\. GPU (?P<gpu_index>\d+) has a total capac(?:i)?ty of "
        rf"(?P<total_mib>{SIZE}) of which (?P<free_mib>{SIZE}) is free"
        rf"(?:.*?(?:Process (?P<other_pid>\d+)|this process) has (?P<in_use_mib>{SIZE}) memory in use)?"
        rf"(?:.*?Of the allocated memory (?P<torch_allocated_mib>{SIZE}) is allocated by PyTorch)?",
        "The GPU ran out of memory (weights + KV cache at this max_seq_len + scratch did not fit)",
        f"{EXL2_REPO}/issues/677", "P"),
    gpu_oom(
        "cuda-oom-legacy", "torch", "out of memory",
        rf"CUDA out of memory\. Tried to allocate (?P<tried_mib>{SIZE}) \(GPU (?P<gpu_index>\d+); (?P<total_mib>{SIZE}) "
        rf"total capacity; (?P<torch_allocated_mib>{SIZE}) already allocated; (?P<free_mib>{SIZE}) free",
        "The GPU ran out of memory (torch 2.0 and older wording)", "https://github.com/kchengiva/Shift-GCN/issues/34", "S"),
    gpu_oom("cuda-oom-plain", "torch / CUDA", "out of memory", r"CUDA (?:error: )?out of memory",
            "The GPU ran out of memory", f"{EXL2_REPO}/issues/677", "P"),
    Signature(
        "exllamav2-insufficient-vram", "exllamav2", "insufficient",
        r"Insufficient VRAM (?:in split )?for model and cache",
        (CheckId.MEMORY_BUDGET, CheckId.GPU_PROCESSES),
        "ExLlamaV2's autosplit could not fit the model and its cache on the GPUs (often a default 32k-128k context)",
        "Set max_seq_len (e.g. 4096 or 8192) when creating the cache, or use a Q8/Q4 cache.",
        f"{EXL2_REPO}/issues/383", "P",
        probe_kind=FailureKind.OOM),
    Signature(
        "exllamav2-insufficient-space", "exllamav2", "insufficient",
        r"Insufficient space in device allocation",
        (CheckId.MEMORY_BUDGET,),
        "The gpu_split given to ExLlamaV2 is smaller than the weights plus scratch it must hold",
        "Raise the gpu_split entries (GB per GPU, weights and scratch only), or let autosplit place the layers.",
        f"{EXL2_REPO}/issues/168", "P",
        probe_kind=FailureKind.OOM),
    gpu_oom(
        "out-of-memory-any-wording", "torch / CUDA / exllamav2", ("out of memory", "outofmemoryerror"),
        r"out of memory|OutOfMemoryError", "The GPU ran out of memory (a wording the rows above do not quote)",
        f"{EXL2_REPO}/issues/677", "P", in_logs=False),  # in a log the CUDA OOM rows above say more (with the numbers)
    # --- model format ---------------------------------------------------------------------------------------
    Signature(
        "exl3-needs-exllamav3", "ExLlamaV3 loaders", ("exllamav3", "exl3"),
        r"No module named '?exllamav3'?|Unsupported quantization method:? ['\"]?exl3\b",
        (CheckId.QUANT_FORMAT, CheckId.COMPUTE_CAPABILITY),
        "An EXL3 model (quant_method exl3) needs ExLlamaV3, and ExLlamaV3 needs cc 8.0 or newer",
        "On a V100 (cc 7.0) or any card below cc 8.0 use an EXL2 quant of the same model with ExLlamaV2; "
        "`v100-doctor --model DIR` says which runtime each format gets on this card.",
        "https://github.com/oobabooga/textgen/issues/6839", "P"),
    gpu_oom(
        "cuda-malloc-async-oom", "torch (cudaMallocAsync allocator)", "exceed allowed memory",
        r"Allocation on device (?P<gpu_index>\d+) would exceed allowed memory\. \(out of memory\)",
        "The GPU ran out of memory under torch's cudaMallocAsync allocator (PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync, "
        "TabbyAPI's cuda_malloc_async / cuda_malloc_backend): the same budget, another wording; this allocator can run "
        "out where the default one still fits",
        "https://github.com/theroyallab/tabbyAPI/issues/381", "P",
        fix=OOM_FIX + " Also try the default allocator: in TabbyAPI set cuda_malloc_async: false in config.yml (its "
        "default now; older versions call it cuda_malloc_backend), elsewhere unset "
        "PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync.",
        followup=(rf"Currently allocated\s*: (?P<allocated_mib>{SIZE})|Requested\s*: (?P<tried_mib>{SIZE})"
                  rf"|Device limit\s*: (?P<total_mib>{SIZE})|Free \(according to CUDA\)\s*: (?P<free_mib>{SIZE}|\d+ bytes)"),
        followup_lines=6),
    Signature(
        "tabbyapi-one-gpu-no-split", "TabbyAPI", "disabling gpu split",
        r"Disabling GPU split because one GPU is in use",
        (CheckId.MEMORY_BUDGET,),
        "TabbyAPI sees one GPU, so gpu_split and gpu_split_auto are ignored: the whole model and cache must fit this card",
        "Nothing to fix when one GPU is meant. If a second GPU should take layers, check CUDA_VISIBLE_DEVICES and that "
        "`nvidia-smi -L` lists it.",
        "https://github.com/theroyallab/tabbyAPI/blob/main/backends/exllamav2/model.py", "P", severity="info",
        rules_out_on_pass=False, pass_note="a passing memory budget says the model fits one GPU; it does not say how many GPUs TabbyAPI sees"),
    Signature(
        "accelerate-offloaded-to-cpu", "accelerate / transformers", "offloaded to the",
        r"Some parameters are on the meta device(?: device)? because they were offloaded to the (?P<offloaded_to>cpu(?:/disk| and/or disk| and disk)?|disk)",
        (CheckId.CPU_OFFLOAD,),
        "The loader (device_map=\"auto\") put part of the weights in CPU RAM or on disk: every token copies them over "
        "PCIe, so decode runs at a fraction of the GPU's speed",
        "Make the model fit the GPU instead: a smaller quant (EXL2 at a lower bpw with ExLlamaV2), a shorter context, or "
        "free the GPU; `v100-doctor --model DIR` shows what fits. max_memory/device_map only move the split.",
        "https://github.com/hiyouga/LlamaFactory/issues/4697", "P", severity="warning", rules_out_on_pass=False,
        pass_note="the cpu-offload check judges the server running now (or the config given); the log's loader said "
                  "that run offloaded"),
    # --- JIT build of exllamav2_ext -------------------------------------------------------------------------
    Signature(
        "cuda-version-mismatch", "torch cpp_extension", "mismatches",
        r"The detected CUDA version \((?P<nvcc_cuda>[\d.]+)\) mismatches the version that was used to compile"
        r"(?:\s+PyTorch \((?P<torch_cuda>[\d.]+)\))?",
        (CheckId.CUDA_PAIRING, CheckId.EXLLAMAV2_READY),
        "nvcc's CUDA major version differs from the one torch was built with, so JIT extensions will not build",
        "Install the CUDA toolkit whose major version matches torch.version.cuda and point CUDA_HOME at it, or "
        "install the torch variant that matches your nvcc.",
        "https://github.com/vllm-project/vllm/issues/1060", "P",
        followup=r"PyTorch \((?P<torch_cuda>[\d.]+)\)", followup_lines=1,
        probe_kind=FailureKind.JIT_BUILD),
    Signature(
        "nvcc-unsupported-arch", "nvcc", "unsupported gpu",
        r"Unsupported gpu architecture '(?:compute|sm)_(?P<arch_cc>\d+)'",
        (CheckId.CUDA_PAIRING, CheckId.EXLLAMAV2_READY),
        "This nvcc cannot compile for the card: CUDA 13 dropped Volta/Pascal (sm_70/sm_6x); very old nvcc lacks new cards",
        "Build with a CUDA 12.x toolkit (12.6-12.9 still target sm_70): export CUDA_HOME=/usr/local/cuda-12.6 and "
        "put its bin/ first on PATH.",
        "https://github.com/RenderKit/oidn/issues/274", "P",
        probe_kind=FailureKind.JIT_BUILD),
    Signature(
        "cuda-home-not-set", "torch cpp_extension", "cuda_home",
        r"CUDA_HOME environment variable is not set",
        (CheckId.EXLLAMAV2_READY,),
        "No CUDA toolkit (nvcc) was found, so ExLlamaV2's extension cannot be JIT-built",
        "Install a CUDA 12.x toolkit and export CUDA_HOME=/usr/local/cuda-12.x, or install a prebuilt exllamav2 "
        "wheel that matches your torch.",
        "https://github.com/turboderp-org/exui/issues/38", "P",
        probe_kind=FailureKind.JIT_BUILD),
    Signature(
        "ninja-missing", "torch cpp_extension", "ninja is required",
        r"Ninja is required to load C\+\+ extensions",
        (CheckId.EXLLAMAV2_READY,),
        "ninja is not on PATH, so the JIT build cannot start (often: the venv's bin/ is not activated)",
        "pip install ninja inside the same environment, and activate it (the pip ninja lives in venv/bin).",
        "https://github.com/smthemex/ComfyUI_YuE/issues/12", "P", commands=("pip install ninja",),
        probe_kind=FailureKind.JIT_BUILD),
    Signature(
        "jit-build-failed", "torch cpp_extension", ("error building extension", "nvcc fatal", "ninja: build stopped"),
        r"Error building extension|nvcc fatal|ninja: build stopped",
        (CheckId.CUDA_PAIRING, CheckId.EXLLAMAV2_READY),
        "A JIT build of a CUDA extension (ExLlamaV2's exllamav2_ext) failed; the compiler's own line says why",
        JIT_BUILD_FIX,
        "https://github.com/pytorch/pytorch/blob/main/torch/utils/cpp_extension.py", "P", probe_kind=FailureKind.JIT_BUILD,
        in_logs=False,
        consequence_of=("nvcc-unsupported-gcc", "cuda-version-mismatch", "nvcc-unsupported-arch", "cuda-home-not-set", "ninja-missing")),  # in a log the compiler line beside it (nvcc-unsupported-arch, ...) names the cause
    Signature(
        "exllamav2-ext-undefined-symbol", "exllamav2", "undefined symbol",
        r"exllamav2_ext\S*: undefined symbol: (?P<symbol>\S+)|\"undefined symbol\" error here usually means",
        (CheckId.EXLLAMAV2_READY,),
        "A prebuilt exllamav2_ext was compiled against a different torch version than the one installed",
        "Install the exllamav2 wheel built for your exact torch version, or the JIT version "
        "(pip install exllamav2 from PyPI) so it builds against your torch.",
        f"{EXL2_REPO}/issues/427", "P"),
    Signature(
        "flash-attn-undefined-symbol", "flash-attn", "undefined symbol",
        r"(?P<module>flash_attn(?:_2)?_cuda)\S*: undefined symbol(?:: (?P<symbol>\S+))?",
        (CheckId.FLASH_ATTN,),
        "A flash-attn wheel built for another torch (or C++ ABI) than the one installed: its extension cannot load",
        flash_attn_fix() + " On an Ampere+ card instead install the flash-attn wheel built for this exact torch, CUDA and "
        "C++ ABI (cxx11abiTRUE/FALSE), or build it against this torch.",
        "https://github.com/Dao-AILab/flash-attention/issues/853", "P", commands=FLASH_ATTN_COMMANDS,
        rules_out_on_pass=False,
        pass_note="the flash-attn check judges the card and the installed version, not whether its wheel was built for "
                  "this torch; a passing check does not clear a wheel's ABI"),
    Signature(
        "python-module-missing", "Python", "no module named",
        r"No module named '?(?P<module>(?:exllamav2|torch|tokenizers|safetensors)\w*)",
        (CheckId.EXLLAMAV2_READY,),
        "A package the probe (or the server) imports is not installed in the Python that runs it",
        "Install torch with CUDA, exllamav2 and tokenizers in the Python that runs the server (and the doctor), "
        "or activate the environment that has them.",
        "https://github.com/oobabooga/textgen/issues/6163", "P", commands=(PROBE_ENGINE_INSTALL,),
        probe_kind=FailureKind.NOT_INSTALLED),
    # --- the model path ---------------------------------------------------------------------------------------
    Signature(
        "no-safetensors-found", "exllamav2", "safetensors files found",
        r"No \.safetensors files found in (?P<model_dir>.+?)\s*$",
        (CheckId.MODEL_PATH,),
        "ExLlamaV2 found no weights: a wrong directory, or [ ] in the name broke its *.safetensors glob",
        "Point at the directory holding the .safetensors files; rename directories with [ or ] in the name "
        "(e.g. 'Model [4.0bpw]' -> 'Model-4.0bpw').",
        f"{EXL2_REPO}/blob/master/exllamav2/config.py", "P",
        probe_kind=FailureKind.MODEL_LOAD),
    Signature(
        "exllamav2-model-load", "exllamav2", ("could not find", "missing any of", "no supported tokenizer",
                                              "config.json", "unknown dtype", "incompatible shapes",
                                              "sentencepiece-only"),
        r"Could not find .* in model|Missing any of the following keys|No supported tokenizer found|config\.json"
        r"|Unknown dtype|incompatible shapes|SentencePiece-only tokenizers",
        (CheckId.MODEL_PATH,),
        "ExLlamaV2 could not read the model directory (config.json, tokenizer or tensor names)",
        MODEL_FOLDER_FIX,
        f"{EXL2_REPO}/blob/master/exllamav2/config.py", "P", probe_kind=FailureKind.MODEL_LOAD,
        in_logs=False),  # "config.json" alone is on harmless lines of every loader's log
    Signature(
        "argparse-unrecognized-arguments", "argparse (any CLI)", "error",
        r"error: unrecognized arguments: (?P<args>[^-\s]\S*(?: \S+)*)",
        (CheckId.MODEL_PATH,),
        "A launcher got extra words it does not know: usually a path with a space that was not quoted",
        "Quote the path: -m \"/data/models/qwen 27b exl2\", or rename the directory without spaces.",
        "https://github.com/bmaltais/kohya_ss/issues/280", "S"),
    # --- formats the card cannot run -------------------------------------------------------------------------
    Signature(
        "vllm-quantization-min-capability", "vLLM", "capability",
        r"The quantization method (?P<method>\S+) is not supported for the current GPU\. Minimum capability: "
        r"(?P<min_cc>\d+)\. Current capability: (?P<card_cc>\d+)",
        (CheckId.QUANT_FORMAT,),
        "vLLM refuses this quantization format on this card's compute capability (AWQ needs 7.5+)",
        QUANT_FIX,
        "https://github.com/vllm-project/vllm/issues/4202", "P"),
    Signature(
        "vllm-quant-scheme-min-capability", "vLLM (compressed-tensors)", "quantization scheme",
        r"Quantization scheme is not supported for [',\s]*the current GPU\. Min capability: (?P<min_cc>\d+)\.[',\s]*"
        r"Current capability: (?P<card_cc>\d+)",
        (CheckId.QUANT_FORMAT,),
        "vLLM refuses this checkpoint's quantization scheme (compressed-tensors: W8A8, FP8, W4A16 ...) on this card's "
        "compute capability",
        QUANT_FIX + " `v100-doctor --model DIR` says which runtime each format gets on this card.",
        f"{VLLM}/issues/14040", "P"),
    Signature(
        "vllm-bf16-needs-cc80", "vLLM", "bfloat16",
        r"Bfloat16 is only supported on GPUs with compute capability of at least (?P<min_cc>\d+\.\d+)\."
        r"(?: Your (?P<gpu_name>.+?) GPU has compute capability (?P<card_cc>\d+\.\d+))?",
        (CheckId.DTYPE,),
        "vLLM refuses bfloat16 (the model's config.json torch_dtype) on a card without native bf16 (cc < 8.0)",
        "Load in float16: vLLM --dtype half (LLM(..., dtype=\"half\")); V100, T4 and P100 have no bf16.",
        f"{VLLM}/issues/946", "P",
        fix_class="bf16"),
    Signature(
        "torch-autocast-bf16-unsupported", "torch (autocast)", "does not support bfloat16",
        r"Current CUDA Device does not support bfloat16(?:\. Please switch dtype to float16)?",
        (CheckId.DTYPE,),
        "torch.autocast was asked for bfloat16 on a card without bf16 (cc < 8.0)",
        "Autocast and load in float16 (dtype=torch.float16); V100, T4 and P100 have no bf16.",
        "https://github.com/karpathy/nanoGPT/pull/277", "P",
        fix_class="bf16"),
    Signature(
        "bf16-needs-a100", "xformers", "a100+",
        r"bf16 is only supported on A100\+ GPUs",
        (CheckId.DTYPE,),
        "bfloat16 was requested on a card without native bf16 (cc < 8.0)",
        "Load in float16 (torch_dtype=torch.float16 / --dtype half); V100 and T4 have no bf16.",
        "https://github.com/deepseek-ai/DeepSeek-VL2/issues/119", "P"),
    # --- compilers the card is too old for -----------------------------------------------------------------
    Signature(
        "triton-cc-too-old", "Triton (torch.compile / Inductor, vLLM)", "too old to be supported",
        r"Found (?P<gpu_name>.+?) which is too old to be supported by the triton GPU compiler"
        r"(?:.*?your device is of CUDA capability (?P<card_cc>\d+\.\d+))?",
        (CheckId.COMPUTE_CAPABILITY,),
        f"Triton cannot build kernels for this card: it needs cc {TRITON.min_cc}+, and {TRITON.used_by} use it",
        TRITON.without_it, f"{VLLM}/issues/13202", "P", confirmed_by_evidence=(CheckId.COMPUTE_CAPABILITY, "triton")),
    # --- driver ----------------------------------------------------------------------------------------------
    Signature(
        "driver-too-old", "torch", "too old",
        r"The NVIDIA driver on your system is too old \(found version (?P<driver_cudaint>\d+)\)",
        (CheckId.CUDA_PAIRING,),
        "The driver supports an older CUDA than the torch wheel was built with",
        "Install a torch built for the driver's CUDA (see `v100-doctor --check cuda-pairing`), or a newer driver "
        "(for Volta/Pascal at most the R580 branch).",
        "https://github.com/lllyasviel/Fooocus/issues/1313", "P"),
    Signature(
        "nvml-driver-library-mismatch", "NVIDIA driver", "fail",
        r"Failed to initialize NVML: Driver/library version mismatch",
        (CheckId.GPU_PRESENT,),
        "The loaded kernel module and the user-space driver differ (a driver update without a reboot)",
        "Reboot, or unload and reload the nvidia kernel modules.",
        "https://github.com/NVIDIA/ubuntu-packaging-nvidia-driver/issues/3", "P", commands=("sudo reboot",)),
    Signature(
        "ptx-unsupported-toolchain", "CUDA driver (PTX JIT)", "unsupported toolchain",
        r"the provided PTX was compiled with an unsupported toolchain",
        (CheckId.CUDA_PAIRING,),
        "A kernel shipped as PTX was generated by a newer CUDA toolkit than this driver supports, so the driver cannot "
        "JIT-compile it (under minor-version compatibility a driver never JITs newer PTX)",
        "Use builds for the driver's CUDA (`nvidia-smi` shows it top right): a torch/extension wheel of that CUDA or older, "
        "and nvcc of that CUDA for JIT builds; or install a newer driver (for Volta/Pascal at most R580). "
        "`v100-doctor --check cuda-pairing` names the pairing for this machine.",
        "https://github.com/MadryLab/trak/issues/68", "P", rules_out_on_pass=False,
        pass_note=f"torch and nvcc fit this driver, so the newer PTX comes from another build (a prebuilt extension "
                  f"wheel, a Triton kernel, a container's toolkit); that build must match the driver's CUDA ({MVC})"),
    # --- the card itself -----------------------------------------------------------------------------------
    Signature(
        "gpu-fallen-off-bus", "NVIDIA driver (kernel log)", "fallen off",
        r"(?:Xid \((?P<pci>PCI:[\w:.]+)\): (?P<xid>79),.*?)?GPU has fallen off (?:of )?the bus"
        r"|fallen off the bus and is not responding to commands",
        (CheckId.GPU_PRESENT,),
        "The GPU fell off the PCIe bus (Xid 79): a hardware or power fault, not a software pairing",
        GPU_LOST_FIX, FALLEN_OFF_BUS_SOURCE, "P", commands=GPU_LOST_COMMANDS, rules_out_on_pass=False,
        pass_note="the GPU answers now, but a fault that came and went (power, heat, seating) leaves no trace in a "
                  "passing check; the kernel log around the Xid says when"),
    Signature(
        "nvidia-smi-device-handle-unknown", "nvidia-smi / NVML", ("device handle", "nvmldevicegethandlebyindex()"),
        r"(?:Unable to (?:determine|detect) the device handle for GPU ?(?P<pci>[\w:.]+)|nvmlDeviceGetHandleByIndex\(\))"
        r": (?P<nvml_error>Unknown Error|GPU is lost)",
        (CheckId.GPU_PRESENT,),
        "NVML cannot reach this GPU any more (its handle fails with Unknown Error): the card fell off the bus or lost "
        "power; a hardware fault, not a software pairing",
        GPU_LOST_FIX, DEVICE_HANDLE_SOURCE, "P", commands=GPU_LOST_COMMANDS, rules_out_on_pass=False,
        pass_note="the GPU answers now, but a fault that came and went (power, heat, seating) leaves no trace in a "
                  "passing check; the kernel log says when it fell off"),
    # --- installs that pull the wrong torch ------------------------------------------------------------------
    Signature(
        "pip-cuda13-packages", "pip", "nvidia",
        r"\bnvidia[-_](?P<package>[a-z0-9_-]*?)[-_]cu13\b|\bnvidia[-_](?!ml[-_]py)(?P<package13>[a-z_-]+)(?:==|-)13\.\d",
        (CheckId.CUDA_PAIRING,),
        "pip pulled CUDA 13 runtime packages: a torch from PyPI >= 2.11 is a cu130 build, which has no sm_70/sm_6x kernels",
        "Reinstall torch from the cu126 index (or 2.8-2.10 from cu128): pip install torch --index-url "
        "https://download.pytorch.org/whl/cu126",
        "https://github.com/facebookresearch/xformers/issues/1388", "P", severity="warning"),
    Signature(
        "pip-torch-from-pypi-cu130", "pip", "torch-2.",
        r"\btorch-(?P<torch_version>2\.(?:1[1-9]|[2-9]\d)\.\d+)(?![+.\w])",
        (CheckId.CUDA_PAIRING,),
        "pip installed torch >= 2.11 from PyPI, where the default build is CUDA 13.0 (no sm_70/sm_6x kernels)",
        "Reinstall torch from the cu126 index: pip install torch --index-url https://download.pytorch.org/whl/cu126",
        "https://github.com/pytorch/pytorch/pull/177975", "P", severity="warning"),
    # --- bitsandbytes int8 on cards without int8 tensor cores (cc < 7.5) --------------------------------------
    Signature(
        "bnb-int8-matmul-unsupported", "bitsandbytes", ("int8 matmul", "igemmlt"),
        r"Your GPU does not support Int8 Matmul|int igemmlt\(cublasLtHandle_t.*Assertion `false' failed",
        (CheckId.QUANT_FORMAT, CheckId.COMPUTE_CAPABILITY),
        "bitsandbytes' 8-bit matmul (load_in_8bit) needs int8 tensor cores (cc 7.5+); older bitsandbytes aborts in "
        "igemmlt on a P40/P100/V100",
        BNB_INT8_FIX, "https://github.com/bitsandbytes-foundation/bitsandbytes/issues/118", "S"),
    Signature(
        "bnb-int8-slow-matmul", "bitsandbytes", "only slow 8-bit matmul",
        r"Compute capability < 7\.5 detected! Only slow 8-bit matmul is supported for your GPU",
        (CheckId.QUANT_FORMAT, CheckId.COMPUTE_CAPABILITY),
        "bitsandbytes runs load_in_8bit without int8 tensor cores on this card (cc < 7.5): the model loads, decode crawls",
        BNB_INT8_FIX, "https://github.com/bitsandbytes-foundation/bitsandbytes/blob/main/bitsandbytes/diagnostics/cuda.py",
        "P", severity="warning"),
    Signature(
        "bnb-compiled-without-gpu", "bitsandbytes", "compiled without gpu support",
        r"bitsandbytes was compiled without GPU support",
        (CheckId.CUDA_PAIRING,),
        "The installed bitsandbytes has no CUDA library for this machine, so 8-bit/4-bit loading falls back to the CPU "
        "(and device_map=\"auto\" then puts the model there)",
        "Install a bitsandbytes with CUDA support into the same environment as a CUDA build of torch "
        "(pip install -U bitsandbytes; torch from the cu126 index for a V100/T4): check with python -m bitsandbytes.",
        "https://github.com/LlamaChinese/Llama-Chinese/issues/123", "S", severity="warning"),
    Signature(
        "bnb-dispatched-cpu-or-disk", "transformers (bitsandbytes quantizer)", "dispatched on the cpu",
        r"Some modules are dispatched on the CPU or the disk",
        (CheckId.MEMORY_BUDGET, CheckId.CPU_OFFLOAD),
        "device_map=\"auto\" left part of the quantized model on the CPU or disk, and bitsandbytes refused: the model "
        "does not fit the GPU's budget (or torch/bitsandbytes cannot use the GPU at all, so everything went to the CPU)",
        "Make the model fit one GPU: a smaller quant (EXL2 at a lower bpw with ExLlamaV2, or 4-bit), a shorter context; "
        "`v100-doctor --model DIR` shows what fits. If the model is small enough for the card, the GPU was not used at "
        "all: install CUDA builds of torch and bitsandbytes. CPU offload (llm_int8_enable_fp32_cpu_offload=True) runs, "
        "but very slowly.",
        "https://github.com/huggingface/transformers/blob/main/src/transformers/quantizers/quantizer_bnb_8bit.py", "P"),
    # --- ExLlamaV2's JIT build: the host compiler, the build itself, a stale lock -----------------------------
    Signature(
        "nvcc-unsupported-gcc", "nvcc (host compiler check)", "unsupported gnu version",
        r"unsupported GNU version! gcc versions later than (?P<gcc_max>\d+) are not supported",
        (CheckId.EXLLAMAV2_READY, CheckId.CUDA_PAIRING),
        "The host gcc is newer than this nvcc accepts, so the JIT build of the CUDA extension (exllamav2_ext) fails",
        "Build with a gcc this nvcc accepts (the line names the newest; " + NVCC_GCC_SUMMARY + "): install gcc-N and "
        "g++-N of that major and export CC=/usr/bin/gcc-N CXX=/usr/bin/g++-N NVCC_PREPEND_FLAGS='-ccbin /usr/bin/g++-N', "
        "clear the extension's cache (~/.cache/torch_extensions/*/exllamav2_ext) and import again; or install a prebuilt "
        "exllamav2 wheel for this torch and CUDA. -allow-unsupported-compiler is no fix: newer gcc headers break nvcc.",
        "https://github.com/oobabooga/textgen/issues/3883", "S", probe_kind=FailureKind.JIT_BUILD),
    Signature(
        "exllamav2-ext-build-failed", "torch cpp_extension (exllamav2)", "error building extension",
        # only the bare message: when torch appends the build's output to it, a compiler row names the cause there
        r"Error building extension '(?P<extension>exllamav2_ext)'\s*$",
        (CheckId.EXLLAMAV2_READY, CheckId.CUDA_PAIRING),
        "The JIT build of ExLlamaV2's CUDA extension failed; the first compiler error above it says why",
        JIT_BUILD_FIX + " Look above for the first `error` line (nvcc, gcc or ninja); or install a prebuilt exllamav2 "
        "wheel built for this torch and CUDA.",
        "https://github.com/turboderp-org/exllamav2/pull/22", "S", probe_kind=FailureKind.JIT_BUILD),
    Signature(
        "torch-extension-stale-lock", "torch cpp_extension (file baton)", "file_baton.py",
        r"torch[/\\]utils[/\\]file_baton\.py\S*,? line \d+, in wait",
        (CheckId.EXLLAMAV2_READY,),
        "The import waited forever on torch's extension build lock: a build killed earlier (Ctrl-C, OOM, a crash) left "
        "its lock file behind, and every later import waits on it",
        "When no other build is running, delete the lock in the extension's build folder (Linux: "
        "~/.cache/torch_extensions/<py_cu>/exllamav2_ext/lock; print the folder with python -c \"from "
        "torch.utils.cpp_extension import _get_build_directory as g; print(g('exllamav2_ext', False))\"), then import "
        "again.",
        "https://github.com/pytorch/pytorch/issues/189245", "S"),
    # --- decode speed ------------------------------------------------------------------------------------------
    Signature(
        "exllamav2-single-digit-decode", "exllamav2 (test_inference)", "** position",
        r"\*\* Position\s+\d+ \+\s+\d+ tokens:\s+(?P<tok_s>\d\.\d+) t/s",
        (CheckId.COMPUTE_CAPABILITY, CheckId.CPU_OFFLOAD),
        "ExLlamaV2 decodes at single-digit tok/s: on a P40 (sm_61) its FP16 kernels run at 1/64 of the FP32 rate; on a "
        "card with full-rate FP16 weights are spilling to the CPU",
        "On a P40 use llama.cpp with a GGUF quant (it can compute in FP32), not EXL2; on a V100/T4 make the model fit the "
        "GPU (smaller bpw, shorter context, Q8/Q4 cache) so nothing is offloaded.",
        "https://github.com/turboderp-org/exllamav2/issues/40", "S", severity="warning", rules_out_on_pass=False,
        pass_note="the card has full-rate FP16 here; a crawl then comes from offload or the memory budget "
                  "(`v100-doctor watch --pid PID` while it generates)"),
    # --- engines the card cannot run -------------------------------------------------------------------------
    Signature(
        "ptxas-needs-sm80", "ptxas (ExLlamaV3 and other Ampere-only kernels)", "requires .target sm_80",
        r"Feature '(?P<feature>[\w.]+)' requires \.target (?P<min_cc>sm_80) or higher",
        (CheckId.QUANT_FORMAT, CheckId.COMPUTE_CAPABILITY),
        "The kernels being built use Ampere-only instructions (cp.async, m16n8k16): ExLlamaV3/EXL3 and other Ampere "
        "kernels cannot run below cc 8.0",
        EXL3_FIX, "https://github.com/turboderp-org/exllamav3/issues/14", "S"),
    Signature(
        "tabbyapi-exllamav3-needs-ampere", "TabbyAPI (main, ExLlamaV3 backend)", "unable to run exllamav3",
        r"Unable to run ExllamaV3 because an unsupported GPU is found",
        (CheckId.QUANT_FORMAT, CheckId.COMPUTE_CAPABILITY),
        "TabbyAPI's main branch runs only ExLlamaV3, which needs an Ampere (cc 8.0+) NVIDIA GPU: this card cannot run it",
        EXL3_FIX, "https://github.com/theroyallab/tabbyAPI/blob/main/common/hardware.py", "P"),
    Signature(
        "vllm-fa-version-unsupported", "vLLM (V1)", "cannot use fa version",
        r"Cannot use FA version (?P<fa_version>\d) is not supported due to FA\d is only supported on devices with "
        r"compute capability >= 8",
        (CheckId.FLASH_ATTN,),
        "vLLM checked for FlashAttention, found the card below cc 8.0 and goes on with another attention backend "
        "(logged at ERROR, not fatal; expected on a V100/T4)",
        "Nothing to fix unless vLLM stops right after it (old V1 releases asserted here): then use vLLM >= 0.10.2, "
        "which runs V1 in FP16 below cc 8.0, or set VLLM_ATTENTION_BACKEND to a backend this card has.",
        "https://github.com/vllm-project/vllm/issues/15853", "S", severity="info", rules_out_on_pass=False,
        pass_note="vLLM prints this on every card below cc 8.0 and falls back; expected here"),
    # --- the driver and the libraries torch loads -----------------------------------------------------------
    Signature(
        "cuda-driver-insufficient", "CUDA runtime (any engine)", "driver version is insufficient",
        r"CUDA driver version is insufficient for CUDA runtime version",
        (CheckId.CUDA_PAIRING,),
        "The engine's CUDA runtime is newer than the installed driver supports (in a container it can also mean no "
        "driver was mounted)",
        "Use a build of the engine (or an image) for the driver's CUDA (`nvidia-smi` shows it top right), or a driver "
        "new enough for the runtime (CUDA 12.x needs >= 525.60.13, 13.x >= 580.65.06; Volta/Pascal stop at R580); in a "
        "container run it with the NVIDIA runtime (`docker run --gpus all`).",
        "https://github.com/ollama/ollama/issues/7666", "S",
        fix_class="driver",
        consequence_of=("ollama-driver-too-old",)),
    Signature(
        "cuda-compat-unsupported-hw", "CUDA forward compatibility (cuda-compat)",
        ("forward compatibility was attempted", "compatibility mode is unavailable"),
        r"forward compatibility was attempted on non supported HW|compatibility mode is UNAVAILABLE",
        (CheckId.CUDA_PAIRING,),
        "The image runs a newer CUDA through forward compatibility (cuda-compat), which works only on data-centre GPUs "
        "(Tesla V100/T4/P100/P40, A100...) and only with a kernel driver of a supported branch: here CUDA could not start",
        "Use an image (or a torch build) whose CUDA the host driver supports natively (`nvidia-smi` on the host shows it), "
        "or upgrade the host driver; forward compatibility cannot help on a GeForce/Quadro card.",
        "https://github.com/NVIDIA/nvidia-docker/issues/1479", "S"),
    Signature(
        "cuda-compat-enabled", "CUDA forward compatibility (NGC image)", "forward compatibility mode enabled",
        r"CUDA Forward Compatibility mode ENABLED",
        (CheckId.CUDA_PAIRING,),
        "The container runs a newer CUDA than the host driver's through NVIDIA's forward-compatibility package "
        "(supported on data-centre GPUs): not a pairing fault",
        "Nothing to fix: the host driver looks older than the image's CUDA by design here.",
        "https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html", "P", severity="info",
        rules_out_on_pass=False, pass_note="forward compatibility is how this container meets its CUDA; expected"),
    Signature(
        "cudnn-version-incompatible", "torch (cuDNN)", ("cudnn version", "cudnn was compiled"),
        r"cuDNN version (?:incompatibility|mismatch): PyTorch was compiled\s+against "
        r"(?:\((?P<built>\d+, \d+, \d+)\)|(?P<built_int>\d+)) but (?:found runtime version|linked against) "
        r"(?:\((?P<found>\d+, \d+, \d+)\)|(?P<found_int>\d+))",
        (CheckId.CUDA_PAIRING,),
        "Another cuDNN (usually a directory on LD_LIBRARY_PATH) is loaded instead of the one bundled with torch",
        "Remove the cuDNN directory from LD_LIBRARY_PATH (or unset LD_LIBRARY_PATH) so torch loads its own bundled "
        "cuDNN; do not install a second cuDNN to match.",
        "https://github.com/pytorch/pytorch/pull/81881", "P"),
    # --- the card's health in monitoring logs ---------------------------------------------------------------
    Signature(
        "dcgm-thermal-violation", "DCGM", ("thermal violation",),
        r"Thermal violations totaling (?!0\.0 )(?P<seconds>[\d.]+) second|clock(?:s event| throttling) due to thermal "
        r"violation in GPU (?P<gpu_index>\d+)",
        (CheckId.THERMAL,),
        "DCGM saw this GPU slow its clocks because it was too hot",
        "Cool the card: a passive PCIe card needs strong chassis airflow across its heatsink; check fans, blanking "
        "plates and the intake temperature. `v100-doctor --check thermal` reads the card's clocks-event reasons now.",
        "https://github.com/NVIDIA/DCGM/blob/master/dcgmlib/dcgm_errors.h", "P"),
    Signature(
        "dcgm-thermal-violation-zero", "DCGM", ("thermal violation",),
        r"Thermal violations totaling 0\.0 seconds",
        (CheckId.THERMAL,),
        "DCGM's diagnostic counted a thermal violation of 0.0 seconds: its check is that sensitive, the clocks were "
        "not held back",
        "Nothing to fix for this line; a violation of whole seconds, or clocks events under load, would be.",
        "https://github.com/NVIDIA/DCGM/issues/242", "S", severity="info", rules_out_on_pass=False,
        pass_note="a 0.0 s violation is DCGM's noise, not throttling"),
    Signature(
        "no-cuda-gpus-available", "torch", "no cuda gpus are available",
        r"No CUDA GPUs are available",
        (CheckId.GPU_PRESENT, CheckId.CUDA_PAIRING),
        "torch found no CUDA device: usually CUDA_VISIBLE_DEVICES names a card this machine does not have (or is "
        "empty), or the container was started without the NVIDIA runtime",
        "Check CUDA_VISIBLE_DEVICES in the shell or service that starts it: unset it, or list a GPU `nvidia-smi -L` "
        "shows (export CUDA_VISIBLE_DEVICES=0); in a container, start it with the NVIDIA runtime (`docker run --gpus all`).",
        "https://github.com/jiaw-z/CoR-GS/issues/23", "S", commands=("nvidia-smi -L", "unset CUDA_VISIBLE_DEVICES"),
        fix_class="no-gpu"),
    Signature(  # seen on the H200 device, offline, transformers 5.25.0 + kernels 0.19.1 (benchmarks/results/transformers-h200)
        "hub-kernel-trust-offline", "transformers (Hub kernels)", ("could not verify publisher trust",),
        r"Kernel repository '(?P<repo>[\w.-]+/[\w.-]+)' could not verify publisher trust status",
        (CheckId.ENGINE,),
        "Transformers 5 loads some layers' kernels from the Hub (through the `kernels` package it requires) and checks "
        "each kernel's publisher with the Hub first: a machine that cannot reach huggingface.co stops the model's load",
        "Load without the Hub kernels: export USE_HUB_KERNELS=0 before starting it (Transformers then runs its own "
        "PyTorch code for those layers; transformers/integrations/hub_kernels.py). Setting HF_HUB_OFFLINE=1 instead "
        "skips the check only for a kernel already in the local cache (kernels#580).",
        "https://github.com/huggingface/kernels/issues/553 ; https://github.com/huggingface/kernels/pull/512 ; "
        "https://github.com/huggingface/kernels/pull/580", "P", commands=("export USE_HUB_KERNELS=0",),
        rules_out_on_pass=False, pass_note="the checks do not read whether this machine can reach the Hub"),
    Signature(
        "uncorrectable-ecc-error", "NVIDIA driver / nvidia-smi", ("uncorrectable",),
        r"uncorrectable (?:double bit )?(?:ECC )?error|Uncorrectable ECC error",
        (CheckId.GPU_MEMORY_HEALTH,),
        "An uncorrectable ECC error in the GPU's memory: the hardware, not the software",
        XIDS[48].fix, XID_CATALOGUE, "P"),
    # --- issue 35: wordings seen in real pastes, each verified in the public thread named --------------------------
    Signature(
        "vllm-cc-below-7", "vLLM", ("capability less than 7.0", "capability below 7.0"),
        r"GPUs with compute capability (?:less than|below) 7\.0 are not supported",
        (CheckId.COMPUTE_CAPABILITY, CheckId.ENGINE),
        "vLLM has no kernels below cc 7.0 (Pascal: P100, P40; Maxwell): no vLLM release runs on this card",
        "Run the model as a GGUF under llama.cpp or Ollama, which support this card; vLLM needs cc 7.0 or newer.",
        f"{VLLM}/issues/463 ; {VLLM}/issues/1431", "P"),
    Signature(
        "vllm-gemma2-soft-cap", "vLLM (attention backend)", ("logits_soft_cap", "logits soft cap"),
        r"Please use Flashinfer backend for models with ?logits_soft_cap"
        r"|XFormers does not support attention logits soft capping|does not support logits soft cap",
        (CheckId.FLASH_ATTN,),
        "vLLM refuses Gemma-2's attention soft-capping on the backend this card gets (xformers below cc 8.0); FlashInfer "
        "and FlashAttention, which have it, need a newer card",
        "Use a vLLM release with soft-capping in its xformers backend (vllm-project/vllm#11252, in 0.7.0 and newer; 0.19.x "
        "is the last with sm_70 kernels): pip install 'vllm>=0.7,<0.20'; or run the Gemma-2 GGUF under llama.cpp.",
        f"{VLLM}/issues/7060 ; {VLLM}/issues/9922 ; {VLLM}/pull/11252", "S", commands=("pip install 'vllm>=0.7,<0.20'",)),
    Signature(
        "libcudart-missing", "CUDA runtime library (vLLM, compiled extensions)", "libcudart.so",
        r"(?P<library>libcudart\.so\.(?P<cuda_major>\d+)(?:\.\d+)?): cannot open shared object file",
        (CheckId.CUDA_PAIRING,),
        "a compiled module was built against the CUDA runtime named, and no such libcudart is installed (a CUDA 12 "
        "build beside a torch for another CUDA, or a CPU-only torch)",
        "Install the package's CUDA runtime with it, not a torch for another CUDA major on top: reinstall it into a clean "
        "environment so that pip pulls the torch it was built for (that torch brings nvidia-cuda-runtime for the same "
        "major), or use the project's container image.",
        f"{VLLM}/issues/31018 ; {VLLM}/issues/36099 ; {VLLM}/issues/1738", "P", fix_class="cuda-runtime-missing"),
    Signature(
        "hf-trainer-bf16-needs-ampere", "transformers (TrainingArguments)", ("doesn't support bf16/gpu", "--tf32 requires ampere"),
        r"Your setup doesn't support bf16/gpu\. You need (?:torch>=1\.10, using )?Ampere\+? GPU with cuda>=11\.0"
        r"|--tf32 requires Ampere or a newer GPU arch",
        (CheckId.DTYPE,),
        "TrainingArguments(bf16=True) or tf32=True on a card below cc 8.0 (no native bf16, no TF32): the Trainer refuses "
        "to start",
        "Train in float16 instead: TrainingArguments(fp16=True, bf16=False) (--fp16 True --bf16 False on a command line), "
        "and drop tf32=True, which also needs cc 8.0+.",
        "https://github.com/tatsu-lab/stanford_alpaca/issues/133 ; https://github.com/lm-sys/FastChat/issues/399 ; "
        "https://github.com/lm-sys/FastChat/issues/1191", "P",
        fix_class="bf16"),
    Signature(
        "bnb-4bit-float32-compute", "bitsandbytes (Linear4bit)", "linear4bit",
        r"Input type into Linear4bit is torch\.float16, but bnb_4bit_compute_d?type=torch\.float32",
        (CheckId.QUANT_FORMAT,),
        "4-bit layers compute in float32 (BitsAndBytesConfig's default compute dtype) while the model runs in float16: "
        "every matmul is cast up, and inference is slow",
        "Set the compute dtype to the model's: BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.float16) "
        "(float16 on a card without bf16).",
        "https://github.com/h2oai/h2ogpt/pull/682 ; https://github.com/bigcode-project/bigcode-evaluation-harness/issues/192",
        "P", severity="warning"),
    Signature(
        "bnb-named-symbol-not-found", "bitsandbytes (libbitsandbytes_cuda*.so)", "named symbol not found",
        r"(?:Error|CUDA error:) named symbol not found(?: at line \d+ in file (?P<file>\S*ops\.cu))?",
        (CheckId.CUDA_PAIRING, CheckId.QUANT_FORMAT),
        "a CUDA library's kernels do not load on this card and driver: usually an old bitsandbytes binary (its "
        "libbitsandbytes_cuda*.so) built for another CUDA or without this card's architecture",
        "Install a current bitsandbytes, whose wheel carries binaries for each CUDA and card: pip install -U bitsandbytes "
        "(0.43 and newer); unset BNB_CUDA_VERSION and any LD_LIBRARY_PATH that points it at another CUDA runtime.",
        "https://github.com/bitsandbytes-foundation/bitsandbytes/issues/382 ; "
        "https://github.com/bitsandbytes-foundation/bitsandbytes/issues/566", "P", commands=("pip install -U bitsandbytes",)),
) + tuple(
    Signature(
        f"xid-{x.code}", "NVIDIA driver (kernel log)", "nvrm: xid",
        rf"NVRM: Xid \((?P<pci>PCI:[\w:.]+)\): (?P<xid>{x.code}),",
        (x.check,), f"Xid {x.code} ({x.name}): {x.meaning}", x.fix, XID_CATALOGUE, "P", severity=x.severity,
        rules_out_on_pass=x.severity == "error",
        pass_note="" if x.severity == "error" else "an application fault the driver reports; the card may be healthy")
    for x in XIDS.values() if x.code not in XID_ROWS_ELSEWHERE
) + tuple(Signature(**row) for row in ENGINE_SIGNATURE_ROWS)  # llama.cpp and Ollama (doctor/knowledge/engine_signatures.py)


LOG_SIGNATURES = tuple(s for s in SIGNATURES if s.in_logs)  # what `explain` looks for in a log

def probe_failure_kind(text: str) -> FailureKind:
    """The failure kind for an exception text or log tail; INTERNAL when no row knows it."""
    lines = text.splitlines()
    matched = {s.probe_kind for s in SIGNATURES if s.probe_kind and any(s.regex.search(line) for line in lines)}
    return next((kind for kind in PROBE_KINDS if kind in matched), FailureKind.INTERNAL)


def oom_figures(text: str) -> dict[str, float]:
    """The numbers in torch's OOM message ("Tried to allocate 2.00 GiB. GPU 0 has a total capacity of
    15.77 GiB of which 1.02 GiB is free"), in GiB, for the memory-budget finding."""
    out: dict[str, float] = {}
    for key, pattern in (("tried_gib", r"Tried to allocate ([\d.]+) ([GMK]iB)"),
                         ("capacity_gib", r"total capacity of ([\d.]+) ([GMK]iB)"),
                         ("free_gib", r"of which ([\d.]+) ([GMK]iB) is free")):
        m = re.search(pattern, text)
        if m:
            out[key] = round(float(m.group(1)) * {"GiB": 1, "MiB": 1 / 1024, "KiB": 1 / 1024 ** 2}[m.group(2)], 3)
    return out


@dataclass(frozen=True)
class PlanHint:
    """A deployment setting printed in a log (a launcher's config or arguments,
        consequence_of=("nvcc-unsupported-gcc", "cuda-version-mismatch", "nvcc-unsupported-arch", "cuda-home-not-set", "ninja-missing")), used to confirm against the plan."""

    field: str  # Plan field
    anchor: str
    pattern: str


PLAN_HINTS: tuple[PlanHint, ...] = (
    PlanHint("max_seq_len", "seq_len", r"max_seq_len[\"']?\s*[:=]\s*(?P<value>\d+)"),
    PlanHint("max_seq_len", "seq-len", r"--max-seq-len[= ](?P<value>\d+)"),
    PlanHint("max_seq_len", "max_model_len", r"max_model_len[\"']?\s*[:=]\s*(?P<value>\d+)"),  # vLLM's name for it
    PlanHint("max_seq_len", "max-model-len", r"--max-model-len[= ](?P<value>\d+)"),
    PlanHint("cache_mode", "cache_mode", r"cache_mode[\"']?\s*[:=]\s*[\"']?(?P<value>FP16|FP8|Q8|Q6|Q4)\b"),
    PlanHint("cache_mode", "cache-mode", r"--cache-mode[= ](?P<value>FP16|FP8|Q8|Q6|Q4)\b"),
)


def by_id(signature_id: str) -> Signature | None:
    return next((s for s in SIGNATURES if s.id == signature_id), None)
