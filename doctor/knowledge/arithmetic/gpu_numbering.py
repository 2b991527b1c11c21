"""Which index is which: NVML numbers GPUs in PCI bus order, CUDA (and so ExLlamaV2's gpu_split) its own way.

CUDA enumerates fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID; CUDA's heuristic is undocumented, so it
is modelled as higher compute capability first, PCI order among equals, and torch's own device list (which
is in CUDA order) overrules the model when it was recorded. CUDA_VISIBLE_DEVICES then picks and renumbers:
indices into that order, GPU-UUIDs (a unique prefix is enough) or MIG-UUIDs; CUDA stops at the first entry
it cannot resolve (CUDA C Programming Guide, "CUDA Environment Variables").
"""

from __future__ import annotations

from dataclasses import dataclass

from doctor.model.facts import GpuFacts
from doctor.model.unknown import known

CUDA_ENV_DOC = "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#cuda-environment-variables"


@dataclass(frozen=True)
class CudaDevice:
    cuda_index: int
    nvml_index: int
    mig: str | None = None  # the MIG instance's UUID when CUDA sees a MIG slice, not the whole card


@dataclass(frozen=True)
class Numbering:
    order: str  # FASTEST_FIRST | PCI_BUS_ID
    visible: str | None  # CUDA_VISIBLE_DEVICES as set, None when unset
    devices: tuple[CudaDevice, ...]
    problems: tuple[str, ...] = ()  # entries CUDA cannot resolve, duplicates ...
    modelled: bool = True  # False when torch's recorded device list confirmed the order

    def cuda_index_of(self, nvml_index: int) -> int | None:
        return next((d.cuda_index for d in self.devices if d.nvml_index == nvml_index), None)

    @property
    def differs(self) -> bool:
        """CUDA's numbers are not NVML's: the same digit names different cards in nvidia-smi and in gpu_split."""
        return any(d.cuda_index != d.nvml_index for d in self.devices)


def _cc_key(g: GpuFacts) -> tuple:
    cc = g.compute_capability if known(g.compute_capability) else "0.0"
    major, _, minor = cc.partition(".")
    return (-int(major or 0), -int(minor or 0), g.index)


def _base_order(gpus: tuple[GpuFacts, ...], order: str) -> list[GpuFacts]:
    return sorted(gpus, key=lambda g: g.index) if order == "PCI_BUS_ID" else sorted(gpus, key=_cc_key)


def _resolve(entry: str, base: list[GpuFacts]) -> tuple[GpuFacts | None, str | None, str | None]:
    """(gpu, mig uuid, problem) for one CUDA_VISIBLE_DEVICES entry."""
    entry = entry.strip()
    if entry.isdigit():
        i = int(entry)
        return (base[i], None, None) if i < len(base) else (None, None, f"index {i} does not exist ({len(base)} GPU(s))")
    if entry.startswith("MIG-"):
        for g in base:
            if known(g.mig_devices) and any(m.startswith(entry) for m in g.mig_devices):
                return g, next(m for m in g.mig_devices if m.startswith(entry)), None
        return None, None, f"{entry} names no MIG instance here"
    matches = [g for g in base if known(g.uuid) and g.uuid.startswith(entry if entry.startswith("GPU-") else "GPU-" + entry)]
    if len(matches) == 1:
        return matches[0], None, None
    return None, None, (f"{entry} matches {len(matches)} GPUs" if matches else f"{entry} names no GPU here")


def cuda_numbering(gpus: tuple[GpuFacts, ...], env: dict[str, str], torch_ccs: tuple[str, ...] | None = None) -> Numbering:
    """CUDA's view of NVML's GPUs under this environment."""
    order = "PCI_BUS_ID" if env.get("CUDA_DEVICE_ORDER", "").strip().upper() == "PCI_BUS_ID" else "FASTEST_FIRST"
    base = _base_order(gpus, order)
    visible = env.get("CUDA_VISIBLE_DEVICES")
    chosen: list[tuple[GpuFacts, str | None]] = []
    problems: list[str] = []
    if visible is None:  # a MIG-enabled card shows CUDA one of its slices (NVIDIA MIG user guide), modelled as the first
        chosen = [(g, g.mig_devices[0] if g.mig_mode == "enabled" and known(g.mig_devices) and g.mig_devices else None)
                  for g in base]
    else:
        for entry in filter(None, (e.strip() for e in visible.split(","))):
            gpu, mig, problem = _resolve(entry, base)
            if gpu is None:  # then problem says why
                problems.append(f"CUDA_VISIBLE_DEVICES entry {entry!r}: {problem}; CUDA ignores it and every entry after it")
                break
            if any(g.index == gpu.index and m == mig for g, m in chosen):
                problems.append(f"CUDA_VISIBLE_DEVICES names GPU {gpu.index} twice")
                break
            chosen.append((gpu, mig))
    devices = tuple(CudaDevice(i, g.index, m) for i, (g, m) in enumerate(chosen))
    ccs = tuple(g.compute_capability for g, _ in chosen)
    confirmed = bool(torch_ccs and tuple(torch_ccs) == ccs)
    return Numbering(order=order, visible=visible, devices=devices, problems=tuple(problems), modelled=not confirmed)
