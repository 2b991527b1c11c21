"""The host's share of a timed run's instability, measured around the run.

A host-bound decode (one core busy, the GPU waiting) runs at the host's pace. On a shared VM
that pace moves by up to 20% from run to run (issue 17: 66.7-93.7 tok/s on one H200). Four
readings say why: the hypervisor's steal time (/proc/stat), the worker being preempted
(involuntary context switches), the CPU clock, and other processes using CPU meanwhile.
Linux only; anything unreadable is left at zero/empty, never guessed.
"""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass

BUSY_CORES = 0.25  # another process using a quarter of a core or more during a run is named
CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _proc_stat_cpu() -> tuple[int, int]:
    """(steal jiffies, all jiffies) over all CPUs."""
    try:
        with open("/proc/stat") as fh:
            fields = [int(x) for x in fh.readline().split()[1:]]
    except (OSError, ValueError):
        return 0, 0
    return (fields[7] if len(fields) > 7 else 0), sum(fields[:8])


def _cpu_mhz() -> float:
    """Mean current clock of the online CPUs (cpufreq, else /proc/cpuinfo), 0.0 if unreadable."""
    vals = []
    try:
        for name in os.listdir("/sys/devices/system/cpu"):
            path = f"/sys/devices/system/cpu/{name}/cpufreq/scaling_cur_freq"
            if name.startswith("cpu") and name[3:].isdigit() and os.path.exists(path):
                with open(path) as fh:
                    vals.append(int(fh.read()) / 1000.0)
    except (OSError, ValueError):
        vals = []
    if not vals:
        try:
            with open("/proc/cpuinfo") as fh:
                vals = [float(l.split(":")[1]) for l in fh if l.startswith("cpu MHz")]
        except (OSError, ValueError, IndexError):
            return 0.0
    return round(sum(vals) / len(vals), 1) if vals else 0.0


def _process_ticks(skip: int) -> dict[int, tuple[str, int]]:
    """pid -> (name, utime + stime in clock ticks) for every process but `skip`."""
    out: dict[int, tuple[str, int]] = {}
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return out
    for pid in pids:
        if pid == skip:
            continue
        try:
            with open(f"/proc/{pid}/stat") as fh:
                text = fh.read()
            name = text[text.index("(") + 1:text.rindex(")")]
            rest = text[text.rindex(")") + 2:].split()
            out[pid] = (name, int(rest[11]) + int(rest[12]))
        except (OSError, ValueError, IndexError):
            continue
    return out


@dataclass(frozen=True)
class HostSnapshot:
    steal: int
    total: int
    nivcsw: int
    ticks: dict

    @staticmethod
    def now() -> "HostSnapshot":
        steal, total = _proc_stat_cpu()
        return HostSnapshot(steal, total, resource.getrusage(resource.RUSAGE_SELF).ru_nivcsw, _process_ticks(os.getpid()))


@dataclass(frozen=True)
class HostNoise:
    steal_pct: float  # share of all CPU time the hypervisor gave to other guests during the run
    involuntary_switches: int  # times the worker was preempted during the run
    cpu_mhz: float  # mean CPU clock read at the end of the run
    busy_others: tuple[str, ...]  # "name (pid N): 0.9 cores" for other processes busy meanwhile


def between(before: HostSnapshot, after: HostSnapshot, seconds: float) -> HostNoise:
    total = after.total - before.total
    steal = 100.0 * (after.steal - before.steal) / total if total > 0 else 0.0
    busy = []
    for pid, (name, ticks) in after.ticks.items():
        if pid in before.ticks and seconds > 0:
            cores = (ticks - before.ticks[pid][1]) / CLK_TCK / seconds
            if cores >= BUSY_CORES:
                busy.append((cores, f"{name} (pid {pid}): {cores:.2f} cores"))
    return HostNoise(steal_pct=round(steal, 2), involuntary_switches=after.nivcsw - before.nivcsw,
                     cpu_mhz=_cpu_mhz(), busy_others=tuple(t for _, t in sorted(busy, reverse=True)[:3]))
