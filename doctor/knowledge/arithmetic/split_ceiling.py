"""The decode ceiling of a model split over several GPUs: each GPU reads its own share at its own bandwidth.

A layer split runs the GPUs one after another for every token, so the time per token is the sum of each GPU's
bytes ÷ its bandwidth, and the ceiling is one over that: a V100 + P40 split runs at the speed the P40's share
allows, not at the V100's.
"""

from __future__ import annotations

from dataclasses import dataclass

from doctor.knowledge.arithmetic.decode_bytes import read_ms
from doctor.knowledge.arithmetic.vram_budget import Budget


@dataclass(frozen=True)
class GpuShare:
    index: int
    name: str
    bytes: int  # read per token on this GPU (its layers' weights, the head where it lives)
    bandwidth_gbs: float

    @property
    def ms_per_token(self) -> float:
        return read_ms(self.bytes, self.bandwidth_gbs)


@dataclass(frozen=True)
class SplitCeiling:
    shares: tuple[GpuShare, ...]

    @property
    def ms_per_token(self) -> float:
        return sum(s.ms_per_token for s in self.shares)

    @property
    def tok_s(self) -> float:
        return 1000 / self.ms_per_token if self.ms_per_token else 0.0

    def slowest(self) -> GpuShare:
        return max(self.shares, key=lambda s: s.ms_per_token)


def split_ceiling(budget: Budget, cards: list[tuple[str, float | None]]) -> SplitCeiling | None:
    """`cards`: (name, bandwidth GB/s) per budget device, in CUDA order; None when a used GPU's bandwidth is unknown."""
    shares = []
    for dev, (name, bw) in zip(budget.devices, cards):
        weights = dev.components.get("weights", 0)
        if not weights:
            continue
        if not bw:
            return None
        shares.append(GpuShare(dev.index, name, weights, bw))
    return SplitCeiling(tuple(shares)) if len(shares) > 1 else None
