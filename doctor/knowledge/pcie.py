"""PCIe link bandwidth per generation, and what a link costs a model streamed across it.

Per-lane data rate after line coding, one direction (PCI-SIG figures as tabulated at
https://en.wikipedia.org/wiki/PCI_Express#Comparison_table, confidence S):
gen1 2.5 GT/s 8b/10b = 0.250 GB/s, gen2 5 GT/s = 0.500, gen3 8 GT/s 128b/130b = 0.985,
gen4 16 GT/s = 1.969, gen5 32 GT/s = 3.938.
Usable host->device copy rate is lower (packet headers, DMA); PRACTICAL_FRACTION = 0.8 is an
estimate (K), consistent with the ~12 GB/s pinned-memory copies commonly reported on gen3 x16,
and every figure derived from it is labelled an estimate.
"""

from __future__ import annotations

SOURCE = "https://en.wikipedia.org/wiki/PCI_Express#Comparison_table"
CONFIDENCE = "S"
PER_LANE_GBS = {1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}
PRACTICAL_FRACTION = 0.8  # estimate (K): usable share of the raw link rate for host->device copies


def link_gbs(gen: int, width: int) -> float | None:
    """Raw one-direction bandwidth of a link, GB/s (1e9 B)."""
    per_lane = PER_LANE_GBS.get(gen)
    return round(per_lane * width, 2) if per_lane and width else None


def practical_gbs(gen: int, width: int) -> float | None:
    """Estimated usable host->device rate, GB/s."""
    raw = link_gbs(gen, width)
    return round(raw * PRACTICAL_FRACTION, 2) if raw else None


def decode_tok_s(gpu_bytes: float, offloaded_bytes: float, hbm_gbs: float | None, pcie_gbs: float) -> float:
    """Upper bound on decode speed when `offloaded_bytes` of weights cross PCIe every token.

    Each token reads the resident weights from VRAM and pulls the offloaded ones over the link:
    t = gpu_bytes / HBM + offloaded_bytes / PCIe. Without the HBM figure only the PCIe term is used.
    """
    t = offloaded_bytes / (pcie_gbs * 1e9)
    if hbm_gbs:
        t += gpu_bytes / (hbm_gbs * 1e9)
    return round(1.0 / t, 2) if t > 0 else float("inf")
