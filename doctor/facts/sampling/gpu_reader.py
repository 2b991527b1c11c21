"""Per-tick readings of one GPU, through the same Device as the snapshot (doctor/facts/nvml/device.py).

A sample holds None where the Device gave Unknown; the reason sits once in the series' `unavailable`
(the Device's record of each refused or implausible reading), not in every sample.
"""

from __future__ import annotations

from typing import Any

from doctor.facts.nvml.binding import decode_clocks_event_mask
from doctor.facts.nvml.device import Device
from doctor.facts.sampling.pcie_meter import PcieMeter
from doctor.model.samples import GpuProcessUse, GpuSample, GpuSeries
from doctor.model.unknown import Unknown


class GpuReader:
    def __init__(self, device: Device):
        self.device = device
        self.index = device.index
        self.pcie = PcieMeter(device)

    @property
    def ok(self) -> bool:
        return self.device.handle is not None

    @property
    def unavailable(self) -> dict[str, str]:
        return self.device.unavailable

    def static(self) -> GpuSeries:
        """The limits the samples are compared against."""
        d = self.device
        if not self.ok:
            return GpuSeries(index=self.index, unavailable=dict(d.unavailable))
        return GpuSeries(
            index=self.index,
            name=_value(d.name()),
            sm_clock_max_mhz=_value(d.sm_clock_max_mhz()),
            mem_clock_max_mhz=_value(d.mem_clock_max_mhz()),
            power_limit_w=_rounded(d.power_limit_w()),
            power_default_limit_w=_rounded(d.power_default_limit_w()),
            slowdown_temperature_c=_value(d.slowdown_temperature_c()),
            max_operating_temperature_c=_value(d.max_operating_temperature_c()),
            memory_max_temperature_c=_value(d.memory_max_temperature_c()),
            pcie_gen_max=_value(d.pcie_gen_max()),
            pcie_width_max=_value(d.pcie_width_max()),
            memory_total_mib=_value(d.memory().total_mib),
        )

    def sample(self, t_s: float) -> GpuSample:
        d = self.device
        if not d.readable:
            return GpuSample(t_s=round(t_s, 3))
        mask = d.clocks_event_mask()
        util = d.utilization()
        rx, tx = self.pcie.read(t_s)
        return GpuSample(
            t_s=round(t_s, 3),
            sm_clock_mhz=_value(d.sm_clock_mhz()),
            mem_clock_mhz=_value(d.mem_clock_mhz()),
            reasons=None if isinstance(mask, Unknown) else decode_clocks_event_mask(mask),
            temperature_c=_value(d.temperature_c()),
            memory_temperature_c=_value(d.memory_temperature_c()),
            power_w=_rounded(d.power_draw_w()),
            util_gpu_pct=_value(util.gpu_pct),
            util_mem_pct=_value(util.memory_pct),
            pcie_rx_mbs=rx,
            pcie_tx_mbs=tx,
            pcie_gen=_value(d.pcie_gen()),
            pcie_width=_value(d.pcie_width()),
            memory_used_mib=_value(d.memory().used_mib),
            processes=self._processes(),
        )

    def _processes(self) -> tuple[GpuProcessUse, ...] | None:
        procs = self.device.processes()
        if isinstance(procs, Unknown):
            return None
        return tuple(GpuProcessUse(pid=p.pid, used_mib=_value(p.used_mib)) for p in procs)


def _value(v: Any) -> Any:
    return None if isinstance(v, Unknown) else v


def _rounded(v: Any) -> float | None:
    return None if isinstance(v, Unknown) else round(v, 1)
