"""`gpu-topology`: how each pair of GPUs is linked (NVLink lanes, PCIe switch, host bridge, across sockets) and P2P.

A layer split (ExLlamaV2's gpu_split) passes one hidden state per token between GPUs, so the link barely
matters; tensor parallelism exchanges activations every layer and wants P2P over NVLink or one PCIe switch.
Labels follow `nvidia-smi topo -m`: NV# (bonded NVLinks), PIX, PXB, PHB, NODE, SYS.
"""

from __future__ import annotations

from checks.base import Check, CheckContext
from doctor.model.facts import GpuLink
from doctor.model.findings import Finding, Status
from doctor.model.ids import CheckId
from doctor.model.unknown import known

TOPO_LABEL = {"internal": "PIX", "single-switch": "PIX", "multiple-switches": "PXB", "host-bridge": "PHB",
              "numa-node": "NODE", "system": "SYS"}
SLOW_PATHS = ("numa-node", "system")  # P2P across a socket interconnect is often off, or slower than via the host


def link_label(link: GpuLink) -> str:
    if known(link.nvlink_lanes) and link.nvlink_lanes:
        return f"NV{link.nvlink_lanes}"
    return TOPO_LABEL.get(link.path, "?") if known(link.path) else "?"


def _judged(ctx: CheckContext) -> list[int]:
    indices = [g.index for g in ctx.facts.nvml.gpus]
    return [i for i in indices if ctx.plan.gpu_indices is None or i in ctx.plan.gpu_indices]


def run(ctx: CheckContext) -> Finding:
    nvml = ctx.facts.nvml
    judged = _judged(ctx)
    pairs = [(a, b) for i, a in enumerate(judged) for b in judged[i + 1:]]
    links = {p: nvml.link(*p) for p in pairs}
    if not pairs or all(l is None for l in links.values()):
        return CHECK.finding(Status.SKIP, "no topology recorded for these GPUs (NVML gave no pairwise links)")
    matrix = {f"{a}-{b}": (link_label(l) + ("" if l.p2p == "ok" else f", P2P {l.p2p if known(l.p2p) else 'unknown'}"))
              if l else "not recorded" for (a, b), l in links.items()}
    no_p2p = [f"{a}-{b}" for (a, b), l in links.items() if l is None or l.p2p != "ok"]
    nvlinked = [k for (a, b), l in links.items() if l and known(l.nvlink_lanes) and l.nvlink_lanes
                for k in [f"{a}-{b}"]]
    evidence = {"links": matrix, "without_p2p": no_p2p, "nvlink_pairs": nvlinked,
                "legend": "NV# = # bonded NVLinks, PIX = one PCIe switch, PXB = several switches, PHB = host bridge, "
                          "NODE = host bridges in one NUMA node, SYS = across sockets", "numbers": "NVML indices"}
    summary = f"{len(nvlinked)} of {len(pairs)} pair(s) on NVLink; " + ", ".join(f"{k}: {v}" for k, v in list(matrix.items())[:6])
    if len(matrix) > 6:
        summary += f", … ({len(matrix) - 6} more, -v)"
    if ctx.plan.tensor_parallel and no_p2p:
        return CHECK.finding(Status.FAIL, f"tensor parallelism is planned but {len(no_p2p)} pair(s) have no P2P "
                             f"({', '.join(no_p2p[:6])}): every layer's all-reduce goes through host memory", evidence,
                             "Plan tensor parallelism only over GPUs with P2P (NVLink or one PCIe switch), or use a "
                             "layer split (ExLlamaV2 gpu_split), which passes one hidden state per token.",
                             ["nvidia-smi topo -m", "nvidia-smi topo -p2p r"])
    if no_p2p:
        return CHECK.finding(Status.INFO, f"{summary}; no P2P on {', '.join(no_p2p[:6])} (fine for a layer split, "
                             "not for tensor parallelism)", evidence)
    return CHECK.finding(Status.PASS, summary, evidence)


CHECK = Check(id=CheckId("gpu-topology"), title="GPU topology and P2P", run=run, depends_on=(CheckId.GPU_PRESENT,), order=20)
