"""Packages built against one torch release: which versions go with which torch.

torchvision 0.(N+15) and torchaudio 2.N ship with torch 2.N (2.4.0 -> 0.19.0 / 2.4.0), per the
"previous versions" install lines; xformers and flash-attn wheels are compiled for one torch and
must be replaced when torch changes.
"""

from __future__ import annotations

PREVIOUS_VERSIONS = "https://pytorch.org/get-started/previous-versions/"
VISION_TABLE = "https://github.com/pytorch/vision#installation"
XFORMERS_README = "https://github.com/facebookresearch/xformers#installing-xformers"

# companion -> (how its version follows torch 2.N, source, confidence). P up to 2.8 (read), K after (the rule extrapolated)
COMPANION_RULES: dict[str, tuple[str, str, str]] = {
    "torchvision": ("0.{minor_plus_15}", PREVIOUS_VERSIONS + " ; " + VISION_TABLE, "P"),
    "torchaudio": ("2.{minor}", PREVIOUS_VERSIONS, "P"),
}
RULE_READ_UP_TO = 8  # torch 2.8: newer pins follow the same rule but were not read in a source (K)

# compiled against one torch: no pin can be computed here, the step says it must change with torch
REBUILT_WITH_TORCH: dict[str, str] = {
    "xformers": XFORMERS_README + " (each xformers release requires one torch release)",
    "flash-attn": "https://github.com/Dao-AILab/flash-attention#installation-and-features (built against the installed torch)",
}


def companion_pin(name: str, torch_minor: int, torch_patch: int | None) -> str | None:
    """'torchvision', 11, 0 -> '0.26.0'; patch None -> '0.26.*'. None for a package without a rule."""
    rule = COMPANION_RULES.get(name)
    if rule is None:
        return None
    base = rule[0].format(minor=torch_minor, minor_plus_15=torch_minor + 15)
    return f"{base}.{torch_patch}" if torch_patch is not None else f"{base}.*"
