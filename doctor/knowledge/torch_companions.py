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
RULE_READ_UP_TO = 9  # 2.9 -> 0.24.0 / 2.9.0 seen in public install lines (S); newer pins follow the rule unread (K)
# Patch releases do not always line up (torch 2.9.1 ships with torchaudio 2.9.0), so companions are pinned to the
# minor with a wildcard and pip's resolver picks the patch that matches the torch it installs.

# compiled against one torch: no pin can be computed here, the step says it must change with torch
REBUILT_WITH_TORCH: dict[str, str] = {
    "xformers": XFORMERS_README + " (each xformers release requires one torch release)",
    "flash-attn": "https://github.com/Dao-AILab/flash-attention#installation-and-features (built against the installed torch)",
}


def companion_pin(name: str, torch_minor: int) -> str | None:
    """'torchvision', 11 -> '0.26.*'. None for a package without a rule."""
    rule = COMPANION_RULES.get(name)
    if rule is None:
        return None
    return rule[0].format(minor=torch_minor, minor_plus_15=torch_minor + 15) + ".*"


# packages that require a torch at least this new from a version on: (from version, torch >=, source). exllamav2's
# requirements went to torch>=2.2.0 in the first release after 0.0.12 ("I'll bump the Torch requirement to 2.2.x for
# the next release", the maintainer), and every later release keeps it; its 0.1.x wheels were built for torch 2.3.1
MIN_TORCH: dict[str, tuple[str, str, str]] = {
    "exllamav2": ("0.0.13", "2.2", "https://github.com/turboderp-org/exllamav2/issues/298 ; "
                  "https://github.com/turboderp-org/exllamav2/blob/master/requirements.txt"),
}


def torch_floor(package: str, version: str) -> tuple[str, str] | None:
    """(the torch this package version needs at least, source); None when no floor is known for it."""
    from packaging.version import InvalidVersion, Version  # lazy: packaging is only needed for this comparison

    rule = MIN_TORCH.get(package)
    if rule is None:
        return None
    try:
        return (rule[1], rule[2]) if Version(version.split("+")[0]) >= Version(rule[0]) else None
    except InvalidVersion:
        return None
