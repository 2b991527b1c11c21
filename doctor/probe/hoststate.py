"""Telling a host-bound state from the card's real speed, with the worker's own host counters.

Seen on the H200 (../shared/notes/device-recipes.md): the first model loaded in a process
decoded ~15x slower than a second load of the same model, steadily (small spread), with one
core busy, the GPU 4-8% utilised and ~270 minor page faults per token; the healthy load took
none. A probe must never report such a pass as the card's speed. So every pass records its
faults per token and CPU/wall, a pass with page-fault churn triggers an independent second
load, and the faster, clean pass is the one reported; the other is named in the verdict.
"""

from __future__ import annotations

from dataclasses import replace

from doctor.model.probe_results import DecodePass, DecodeRun

CHURN_FAULTS_PER_TOKEN = 20.0  # a healthy steady decode touches no new host memory (0 faults/token)
SLOWER_BY = 0.8  # a pass below 80% of an independent second load is not the card's speed
FIRST_USE_SLOWER = 0.5  # a warm-up at under half the runs' speed pays a first-use cost


def churn(p: DecodePass) -> str:
    """Why this pass looks host-bound by its own counters, or ""."""
    if p.runs and p.faults_per_token >= CHURN_FAULTS_PER_TOKEN:
        return (f"{p.faults_per_token:.0f} minor page faults per token with the worker at {p.cpu_wall:.2f} CPU/wall: "
                "host-side memory churn paces decode")
    return ""


def first_use(p: DecodePass) -> str:
    """The warm-up meets each context length for the first time; the timed runs meet the same lengths
    again. Far slower warm-up with page-fault churn is a per-length first-use cost: seen on the H200,
    where torch's SDPA picks cuDNN attention and cuDNN builds an execution graph for every new
    sequence length (benchmarks/results/trap_*.json)."""
    if not p.runs or not p.warmup_s or not p.median_tok_s:
        return ""
    if p.warmup_tok_s < FIRST_USE_SLOWER * p.median_tok_s and p.warmup_faults_per_token >= CHURN_FAULTS_PER_TOKEN:
        return (f"the warm-up, meeting each context length for the first time, ran at {p.warmup_tok_s:.1f} tok/s with "
                f"{p.warmup_faults_per_token:.0f} page faults per token; the same lengths met again ran at "
                f"{p.median_tok_s:.1f} tok/s: a per-length first-use cost on the host")
    return ""


def wants_second_pass(mode: str, first: DecodePass) -> bool:
    return mode == "always" or (mode == "auto" and bool(churn(first)))


def judge(first: DecodePass, second: DecodePass | None) -> tuple[tuple[DecodePass, ...], int]:
    """Flag each pass and pick the one to report: the clean one; the first when both are clean; never a flagged
    pass when a clean one exists (when both are flagged, the faster, and the verdict names the state)."""
    first = replace(first, first_use=first_use(first))
    if second is None:
        return (replace(first, flag=churn(first)),), 1
    second = replace(second, first_use=first_use(second))
    f1, f2 = churn(first), churn(second)
    if not f1 and second.median_tok_s and first.median_tok_s < SLOWER_BY * second.median_tok_s:
        f1 = (f"{first.median_tok_s:.1f} tok/s, {100 * (1 - first.median_tok_s / second.median_tok_s):.0f}% below an "
              f"independent second load ({second.median_tok_s:.1f} tok/s)")
    if not f2 and first.median_tok_s and second.median_tok_s < SLOWER_BY * first.median_tok_s:
        f2 = (f"{second.median_tok_s:.1f} tok/s, {100 * (1 - second.median_tok_s / first.median_tok_s):.0f}% below "
              f"the first load ({first.median_tok_s:.1f} tok/s)")
    passes = (replace(first, flag=f1), replace(second, flag=f2))
    clean = [p for p in passes if not p.flag]
    if len(clean) == 1:
        return passes, clean[0].index
    if clean:  # both clean: the first load, as a user would meet it (no best-of-two upward bias)
        return passes, 1
    return passes, max(passes, key=lambda p: p.median_tok_s).index


STEAL_NOTABLE_PCT = 2.0  # steal above this share of CPU time in a run is named
CLOCK_NOTABLE = 0.05  # a CPU clock 5% below the fastest run's is named


def window_spread(runs: tuple[DecodeRun, ...] | list[DecodeRun]) -> float:
    speeds = sorted(r.tok_s for r in runs)
    mid = speeds[len(speeds) // 2] if speeds else 0.0
    return 100.0 * (speeds[-1] - speeds[0]) / mid if mid else 0.0


def settled_window(runs: list[DecodeRun], size: int, limit_pct: float) -> int:
    """The size of the settled window at the end of `runs` (`size` runs within limit_pct), or 0."""
    if len(runs) < size:
        return 0
    return size if window_spread(runs[-size:]) <= limit_pct else 0


def instability_cause(runs: tuple[DecodeRun, ...]) -> str:
    """What the host counters say about the slow runs against the fastest one, in words ("" = nothing measured)."""
    if not runs:
        return ""
    fast = max(runs, key=lambda r: r.tok_s)
    said = []
    for r in sorted(runs, key=lambda r: r.tok_s)[:3]:
        if r is fast or r.tok_s >= 0.97 * fast.tok_s:
            continue
        why = []
        if r.steal_pct >= STEAL_NOTABLE_PCT and r.steal_pct > fast.steal_pct + 1:
            why.append(f"{r.steal_pct:.0f}% steal time (the hypervisor ran other guests; {fast.steal_pct:.0f}% in the fastest run)")
        if r.involuntary_switches > 2 * fast.involuntary_switches + 20:
            why.append(f"the worker preempted {r.involuntary_switches:,} times ({fast.involuntary_switches:,} in the fastest run)")
        if fast.cpu_mhz and r.cpu_mhz and r.cpu_mhz < (1 - CLOCK_NOTABLE) * fast.cpu_mhz:
            why.append(f"CPU clock {r.cpu_mhz:,.0f} MHz against {fast.cpu_mhz:,.0f} MHz")
        if r.busy_others:
            why.append("other processes busy: " + "; ".join(r.busy_others))
        if why:
            said.append(f"run {r.run} ({r.tok_s:.1f} tok/s, {100 * (1 - r.tok_s / fast.tok_s):.0f}% below the fastest): "
                        + ", ".join(why))
    if said:
        return "the host was busy: " + "; ".join(said)
    return ("no host counter moved (steal, preemptions, CPU clock and other processes were as in the fastest run): "
            "the cause is outside what the worker can see, such as a noisy neighbour's memory traffic or the GPU side")


SHIFT_PCT = 10.0  # an earlier run this far from the settled median means the pace moved, not noise


def pace_shift(p: DecodePass) -> str:
    """The runs settled, but only after runs at another pace: name it, with what the host counters say.
    Seen on the H200 with a 64-layer EXL2 model: five runs at 58-64 tok/s, then three at 104.5 (0.1%
    apart); the next process started at 104 and fell to 64 (benchmarks/results/issue17-h200/)."""
    if p.unsettled or not p.window or len(p.runs) <= p.window:
        return ""
    m = p.median_tok_s
    earlier = p.runs[:-p.window]
    off = [r for r in earlier if m and abs(r.tok_s - m) > SHIFT_PCT / 100 * m]
    if not off:
        return ""
    first, cause = p.runs[-p.window].run, instability_cause(p.runs)
    lo, hi = min(r.tok_s for r in off), max(r.tok_s for r in off)
    return (f"Decode settled only on runs {first}-{p.runs[-1].run} of {len(p.runs)}; {len(off)} earlier "
            f"run{'s' if len(off) > 1 else ''} ran at {lo:.1f}{f'-{hi:.1f}' if hi != lo else ''} tok/s, up to "
            f"{max(abs(r.tok_s - m) for r in off) / m:.0%} from it: this host's pace moved during the probe, so the "
            f"figure holds only while it stays there. {cause[:1].upper()}{cause[1:]}")


def unsettled(runs: tuple[DecodeRun, ...], size: int, limit_pct: float, budget_s: float) -> str:
    spread = window_spread(runs[-size:])
    return (f"decode did not settle: the last {size} of {len(runs)} runs spread {spread:.1f}% "
            f"({min(r.tok_s for r in runs):.1f}-{max(r.tok_s for r in runs):.1f} tok/s over all runs; target "
            f"{limit_pct:g}% within {budget_s:g} s). {instability_cause(runs)}")
