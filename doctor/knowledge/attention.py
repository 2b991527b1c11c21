"""Attention kernels and number formats by compute capability."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FlashAttnGeneration:
    major: int
    min_cc: str
    allowed: tuple[str, ...]  # explicit cc list where the check is not a plain minimum
    error: str
    source: str
    confidence: str


FLASH_ATTN: tuple[FlashAttnGeneration, ...] = (
    FlashAttnGeneration(1, "7.5", ("7.5", "8.0", "8.6", "8.7", "8.9", "9.0"),
                        "FlashAttention only supports Turing, Ampere or Hopper GPUs",
                        "https://github.com/Dao-AILab/flash-attention/blob/v1.0.9/csrc/flash_attn/fmha_api.cpp", "P"),
    FlashAttnGeneration(2, "8.0", (), "FlashAttention only supports Ampere GPUs or newer.",
                        "https://github.com/Dao-AILab/flash-attention/blob/main/csrc/flash_attn/flash_api.cpp", "P"),
    FlashAttnGeneration(3, "8.0", (), "FlashAttention only supports Ampere GPUs or newer.",
                        "https://github.com/Dao-AILab/flash-attention/blob/main/hopper/flash_api.cpp (README: H100/H800)", "P"),
)

NUMBER_FORMATS = {
    "bf16": ("8.0", "https://nvidia.github.io/TransformerEngine/support_matrix.html (\"BF16 requires compute capability 8.0 or higher\")", "P"),
    "fp8": ("8.9", "https://nvidia.github.io/TransformerEngine/support_matrix.html", "P"),
    "int8_tensor_cores": ("7.5", "https://huggingface.co/docs/bitsandbytes/v0.50.0/installation (LLM.int8() 7.5+)", "P"),
}

EXLLAMAV2_FLASH_TRAP = (
    "ExLlamaV2 prints '## Warning: Flash Attention is installed but unsupported GPUs were detected.' and still "
    "calls flash-attn, which then raises 'FlashAttention only supports Ampere GPUs or newer'",
    "https://github.com/turboderp-org/exllamav2/issues/502",
)
EXLLAMAV2_ATTN_ORDER = (
    "flash-attn (>= 2.5.7 enables paging) -> xformers -> torch SDPA -> matmul attention; "
    "EXLLAMA_NO_FLASH_ATTN / EXLLAMA_NO_XFORMERS / EXLLAMA_NO_SDPA switch each off",
    "https://github.com/turboderp-org/exllamav2/blob/master/exllamav2/attn.py",
)


FLASH_ATTN_COMMANDS = ("pip uninstall -y flash-attn", "export EXLLAMA_NO_FLASH_ATTN=1")
FLASH_ATTN_AFTER_FIX = "xformers or torch SDPA, which work on sm_70"  # when the card's own path is not known


def flash_attn_fix(gen: FlashAttnGeneration | None = None, cc: str | None = None, instead: str = FLASH_ATTN_AFTER_FIX,
                   card_name: str | None = None) -> str:
    """The one user-facing fix for flash-attn on a card below its minimum: the check, the probe and `explain` print it.

    Without a generation and a card (a log or a crash says only that flash-attn failed) it speaks of flash-attn 2;
    where the card is known it names that card, never an example one.
    """
    gen = gen or FLASH_ATTN[1]
    card = card_is(cc, card_name) if cc else "older cards such as the V100 (7.0) cannot run it"
    return (f"flash-attn {gen.major}.x needs cc {gen.min_cc}+; {card}. ExLlamaV2 warns, then still calls it and crashes "
            f"with \"{gen.error}\". Uninstall it, or set EXLLAMA_NO_FLASH_ATTN=1; ExLlamaV2 then uses {instead}.")


def card_is(cc: str, card_name: str | None = None) -> str:
    """'this card (Tesla T4) is cc 7.5': the card a report is about, by name where it is known."""
    named = f" ({card_name})" if card_name and card_name != "this GPU" else ""
    return f"this card{named} is cc {cc}"


def cc_tuple(cc: str) -> tuple[int, int]:
    major, _, minor = cc.partition(".")
    return int(major), int(minor or 0)


def cc_at_least(cc: str, minimum: str) -> bool:
    return cc_tuple(cc) >= cc_tuple(minimum)


def flash_attn_generation(version: str) -> FlashAttnGeneration | None:
    try:
        major = int(version.split(".")[0])
    except ValueError:
        return None
    for gen in FLASH_ATTN:
        if gen.major == major:
            return gen
    return FLASH_ATTN[-1] if major > FLASH_ATTN[-1].major else None


def flash_attn_supports(gen: FlashAttnGeneration, cc: str) -> bool:
    return cc in gen.allowed if gen.allowed else cc_at_least(cc, gen.min_cc)
