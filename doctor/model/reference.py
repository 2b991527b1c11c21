"""The reference story's figures: the one measured V100 result that the ceiling check, the verdict's reference line
and the TUI's reference bar compare against. Every layer reads it, so it lives at the bottom, with the data."""

from __future__ import annotations

from typing import TypedDict


class SeedReference(TypedDict):
    gpu: str
    measured_tok_s: float
    ceiling_tok_s: float
    weights_gb: float
    bpw: float
    source: str


SEED_REFERENCE: SeedReference = {
    "gpu": "v100-pcie-16gb",
    "measured_tok_s": 64.0,
    "ceiling_tok_s": 70.9,
    "weights_gb": 12.7,
    "bpw": 3.75,
    "source": "the reference story: V100 16 GB, Qwen 27B EXL2 3.75 bpw, 900 GB/s / 12.7 GB = 70.9 tok/s, measured 64.05 tok/s",
}
