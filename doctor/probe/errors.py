"""Recognise why a probe failed from the error text: each known message names its pitfall.

Pure string matching, shared by the worker (on its exceptions) and the runner (on the log tail
of a worker that died without saying why). The messages are the libraries' own; the sources
are in ../shared/notes/exllamav2-research.md §5.3 and compat-research.md.
"""

from __future__ import annotations

import re

# (kind, pattern) in priority order: the first match wins
PATTERNS: tuple[tuple[str, str], ...] = (
    ("flash-attn", r"FlashAttention only supports"),
    ("no-kernel-image", r"no kernel image is available"),
    ("jit-build", r"Error building extension|CUDA_HOME environment variable is not set|Ninja is required"
                  r"|mismatches the version that was used to compile PyTorch|Unsupported gpu architecture"
                  r"|nvcc fatal|ninja: build stopped"),
    ("oom", r"out of memory|OutOfMemoryError|Insufficient VRAM|Insufficient space in device allocation"),
    ("not-installed", r"No module named '?(exllamav2|torch|tokenizers|safetensors)"),
    ("model-load", r"No \.safetensors files found|Could not find .* in model|Missing any of the following keys"
                   r"|No supported tokenizer found|config\.json|Unknown dtype|incompatible shapes"
                   r"|SentencePiece-only tokenizers"),
)


def classify(text: str) -> str:
    """The error kind for an exception text or log tail; "internal" when nothing known matches."""
    for kind, pattern in PATTERNS:
        if re.search(pattern, text, re.IGNORECASE if kind == "oom" else 0):
            return kind
    return "internal"


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


def tail(text: str, lines: int = 25, chars: int = 3000) -> str:
    """The end of a log: where a compiler or a traceback says what went wrong."""
    kept = "\n".join(text.rstrip().splitlines()[-lines:])
    return kept[-chars:]


class ProbeFailure(Exception):
    """Raised inside the worker with a kind the runner maps to a finding."""

    def __init__(self, kind: str, phase: str, message: str, detail: str = ""):
        super().__init__(message)
        self.kind, self.phase, self.message, self.detail = kind, phase, message, detail
