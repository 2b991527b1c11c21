"""How GPUs reach each other: NVML's common ancestor, the NVLink lanes between them, P2P read status."""

from __future__ import annotations

from doctor.facts.nvml.binding import text
from doctor.facts.nvml.device import Device, mapped
from doctor.model.facts import GpuFacts, GpuLink
from doctor.model.unknown import Unknown

# nvmlGpuTopologyLevel_t (nvml.h) -> the words a report uses
TOPOLOGY_LEVELS = {0: "internal", 10: "single-switch", 20: "multiple-switches", 30: "host-bridge", 40: "numa-node",
                   50: "system"}
P2P_STATUS = {0: "ok", 1: "chipset not supported", 2: "GPU not supported", 3: "IOH topology not supported",
              4: "disabled by regkey", 5: "not supported", 6: "unknown"}
NVLINK_MAX_LINKS = 18


def nvlink_peers(d: Device) -> dict[str, int]:
    """Remote PCI bus id -> active NVLink lanes from this GPU (empty on PCIe-only cards)."""
    peers: dict[str, int] = {}
    for link in range(NVLINK_MAX_LINKS):
        state = d.call("nvmlDeviceGetNvLinkState", link)
        if isinstance(state, Unknown):
            break  # NotSupported past the last link (or no NVLink at all)
        if not state:
            continue
        remote = d.call("nvmlDeviceGetNvLinkRemotePciInfo_v2", link)
        if not isinstance(remote, Unknown):
            bus = text(remote.busId).upper()
            peers[bus] = peers.get(bus, 0) + 1
    return peers


def links(devices: list[Device], gpus: tuple[GpuFacts, ...]) -> tuple[GpuLink, ...]:
    """Every pair: NVML's common ancestor, NVLink lanes between them, P2P read status."""
    if len(devices) < 2:
        return ()
    peers = [nvlink_peers(d) for d in devices]
    out = []
    for a in range(len(devices)):
        read = devices[a].binding.const("NVML_P2P_CAPS_INDEX_READ")
        for b in range(a + 1, len(devices)):
            level = devices[a].call("nvmlDeviceGetTopologyCommonAncestor", devices[b].handle)
            p2p = devices[a].call("nvmlDeviceGetP2PStatus", devices[b].handle, read)
            bus = gpus[b].pci_bus_id
            bus_b = bus.upper() if isinstance(bus, str) else None
            out.append(GpuLink(a=a, b=b, path=mapped(level, lambda v: TOPOLOGY_LEVELS.get(int(v), f"level {v}")),
                               nvlink_lanes=peers[a].get(bus_b, 0) if bus_b else Unknown("no PCI bus id"),
                               p2p=mapped(p2p, lambda v: P2P_STATUS.get(int(v), f"status {v}"))))
    return tuple(out)

