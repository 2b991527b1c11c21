"""Published quality cost of a quantization: perplexity added over the unquantized model, where one exists.

llama.cpp's quantize tool lists, per GGUF type, the file size and the perplexity it adds on Llama-3-8B. That is
one model's figure: it is shown for the Llama-3 family only, and any other family's cost is "unknown" (a figure
measured on Llama-3-8B says little about a Qwen MoE or a Gemma). No comparable table is published for EXL2 bits per
weight, so an EXL2 option shows its bpw only.
"""

from __future__ import annotations

QUANTIZE_CPP = "https://github.com/ggml-org/llama.cpp/blob/master/tools/quantize/quantize.cpp (QUANT_OPTIONS)"

# type -> (file size GiB of Llama-3-8B, perplexity added on Llama-3-8B)
GGUF_PPL: dict[str, tuple[float, float]] = {
    "Q2_K": (2.96, 3.5199), "Q3_K_S": (3.41, 1.6321), "Q3_K_M": (3.74, 0.6569), "Q3_K_L": (4.03, 0.5562),
    "Q4_K_S": (4.37, 0.2689), "Q4_K_M": (4.58, 0.1754), "Q5_K_S": (5.21, 0.1049), "Q5_K_M": (5.33, 0.0569),
    "Q6_K": (6.14, 0.0217), "Q8_0": (7.96, 0.0026), "Q4_0": (4.34, 0.4685), "Q5_0": (5.21, 0.1316),
}
LLAMA3_8B_PARAMS = 8.03e9


def gguf_bpw(gguf_type: str) -> float | None:
    """Bits per weight of a GGUF type from its Llama-3-8B size in the same table (GiB x 2^30 x 8 / parameters)."""
    row = GGUF_PPL.get(gguf_type.upper())
    return round(row[0] * 2 ** 30 * 8 / LLAMA3_8B_PARAMS, 2) if row else None


LLAMA3_VOCAB = 128256  # Llama-3's tokenizer: a "llama" config with this vocabulary is of the Llama-3 family


def model_family(model_type: object, vocab: object) -> str:
    """'llama3' for the family llama.cpp's table measured; otherwise the config's model_type (or 'unknown')."""
    if model_type == "llama" and vocab == LLAMA3_VOCAB:
        return "llama3"
    return model_type if isinstance(model_type, str) and model_type else "unknown"


def quality(fmt: str, bpw: float | None, gguf_type: str | None, family: str | None = "llama3") -> tuple[str, str]:
    """(what the option costs in quality, where that comes from). `family`: model_family()'s answer; the published
    perplexity figures are Llama-3-8B's and shown for that family only."""
    bits = f"{bpw:.2f} bpw" if bpw else "bpw unknown"
    if fmt == "gguf" and gguf_type and gguf_type.upper() in GGUF_PPL:
        if family != "llama3":
            return (f"{bits}, quality cost unknown for {family or 'this model'}",
                    f"no published perplexity for this family at {gguf_type.upper()} (llama.cpp's table, "
                    f"{QUANTIZE_CPP}, measures Llama-3-8B: +{GGUF_PPL[gguf_type.upper()][1]:.4f} there)")
        return f"{bits}, +{GGUF_PPL[gguf_type.upper()][1]:.4f} ppl (Llama-3-8B)", QUANTIZE_CPP
    if fmt in ("fp16", "bf16"):
        return "16 bpw, none", "unquantized"
    return bits, "no published perplexity for this format and size"
