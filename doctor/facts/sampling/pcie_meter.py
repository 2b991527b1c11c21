"""Host<->GPU PCIe traffic per tick, from the best source the driver offers.

NVML has two: nvmlDeviceGetPcieThroughput (KB/s over a ~20 ms window inside each call, so it can
miss bursts) and, on newer GPUs/drivers, the byte counters NVML_FI_DEV_PCIE_COUNT_RX/TX_BYTES.
nvml.h says the counters "can be wrapped". Measured on the H200 (driver 580.159.04, 2026-12-02,
benchmarks/pcie_counter_check.py, a loop copying 1.88 GB of pinned memory per token = 53.0 GB/s):
the counters never exceeded 3.13e9, i.e. they wrap at 2^32 bytes, so at 0.2 s per tick their deltas
read 4.05 GB/s (aliased); the throughput call read 57.7 GB/s (1.09x the payload, protocol overhead
included). So a tick's counter delta is exact only modulo 2^32, and the throughput reading of the same
tick picks how many whole wraps to add. Where the counters are missing, the throughput reading is
the rate.
"""

from __future__ import annotations

from doctor.facts.nvml.device import Device
from doctor.model.unknown import Unknown

WRAP = 2**32


def unwrap(delta_mod: int, estimate_bytes: float | None) -> int:
    """The true byte count whose value modulo 2^32 is delta_mod, closest to the coarse estimate."""
    if estimate_bytes is None or estimate_bytes < WRAP / 2:
        return delta_mod
    return delta_mod + max(0, round((estimate_bytes - delta_mod) / WRAP)) * WRAP


class PcieMeter:
    def __init__(self, device: Device):
        self.device = device
        self.source = ""
        self.total_rx = self.total_tx = 0  # bytes counted between the first and the last tick
        self.counted_s = 0.0
        self._last: tuple[float, int, int] | None = None
        self._counters = True

    def read(self, t_s: float) -> tuple[float | None, float | None]:
        """(RX MB/s, TX MB/s) for the time since the previous tick (the first tick has only the throughput)."""
        d = self.device
        thr_rx, thr_tx = _value(d.pcie_throughput_mbs("rx")), _value(d.pcie_throughput_mbs("tx"))
        if self._counters:
            counters = d.pcie_byte_counters()
            if not isinstance(counters, Unknown):
                return self._from_counters(t_s, counters[0], counters[1], thr_rx, thr_tx)
            self._counters = False
        self.source = "throughput (NVML ~20 ms window)"
        return _round(thr_rx), _round(thr_tx)

    def _from_counters(self, t_s: float, rx: int, tx: int, thr_rx: float | None, thr_tx: float | None) -> tuple[float | None, float | None]:
        self.source = "byte counters (unwrapped with the throughput reading)"
        last, self._last = self._last, (t_s, rx, tx)
        if last is None or t_s <= last[0]:
            return _round(thr_rx), _round(thr_tx)
        dt = t_s - last[0]
        d_rx = unwrap((rx - last[1]) % WRAP, None if thr_rx is None else thr_rx * 1e6 * dt)
        d_tx = unwrap((tx - last[2]) % WRAP, None if thr_tx is None else thr_tx * 1e6 * dt)
        self.total_rx += d_rx
        self.total_tx += d_tx
        self.counted_s += dt
        rates = self.device.check("pcie_rx_mbs", d_rx / dt / 1e6), self.device.check("pcie_tx_mbs", d_tx / dt / 1e6)
        return _round(_value(rates[0])), _round(_value(rates[1]))


def _value(v: float | Unknown) -> float | None:
    return None if isinstance(v, Unknown) else v


def _round(v: float | None) -> float | None:
    return None if v is None else round(v, 2)
