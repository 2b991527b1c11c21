"""Timed runs until they agree, for the engine probes' children (llama.cpp, Transformers), as the ExLlamaV2 probe
does: the runs asked for, then more while the last ones spread over the settle line, within a time budget and a cap.
A spread left over the flag line (doctor/verdict/engine_probe.py) is then reported with the runs it took, never hidden.

No imports beyond the standard library: the children load it before the engine.
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable

SETTLE_PCT = 3.0  # the ExLlamaV2 probe's default (--settle-pct)
SETTLE_BUDGET_S = 45.0  # seconds of extra runs (--settle-budget)
MAX_FACTOR = 3  # at most this many times the runs asked for


@dataclass(frozen=True)
class TimedRunOptions:
    """What every engine probe's child times, whatever the engine; each engine's options add its own settings
    (doctor/probe/llamacpp.py ProbeOptions, doctor/probe/transformers.py TransformersOptions)."""

    prompt: int = 128
    warmup: int = 128
    tokens: int = 128
    runs: int = 5
    timeout_s: float = 600.0
    gpu_index: int = 0
    settle_pct: float = SETTLE_PCT  # more runs while the last `runs` spread over this
    settle_budget_s: float = SETTLE_BUDGET_S

    def child_args(self) -> list[str]:
        """These options as the child's flags (add_timing_arguments)."""
        return ["--prompt", str(self.prompt), "--warmup", str(self.warmup), "--tokens", str(self.tokens),
                "--runs", str(self.runs), "--settle-pct", str(self.settle_pct), "--settle-budget", str(self.settle_budget_s)]


def add_timing_arguments(ap: argparse.ArgumentParser, warmup: int) -> None:
    """A child's flags for TimedRunOptions, with its engine's warm-up default."""
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--warmup", type=int, default=warmup)
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--settle-pct", type=float, default=SETTLE_PCT)
    ap.add_argument("--settle-budget", type=float, default=SETTLE_BUDGET_S)


def timing_from(args: argparse.Namespace) -> dict[str, Any]:
    """TimedRunOptions' fields from add_timing_arguments' flags (the timeout and the GPU are each command's own)."""
    return {"prompt": args.prompt, "warmup": args.warmup, "tokens": args.tokens, "runs": args.runs,
            "settle_pct": args.settle_pct, "settle_budget_s": args.settle_budget}


def spread_pct(speeds: list[float]) -> float:
    """(max - min) / median, in percent."""
    med = statistics.median(speeds) if speeds else 0.0
    return 100.0 * (max(speeds) - min(speeds)) / med if len(speeds) > 1 and med else 0.0


def timed_runs(window: Callable[[int], dict], runs: int, tokens: int, say: Callable[..., Any],
               settle_pct: float = SETTLE_PCT, budget_s: float = SETTLE_BUDGET_S,
               clock: Callable[[], float] = time.monotonic) -> list[float]:
    """Run `window(tokens)` `runs` times, then more while the last `runs` spread over `settle_pct`; each run is said
    as a `sample` event (its window on the monotonic clock, for the parent's NVML samples). Returns the speeds."""

    def once(index: int) -> float:
        t0 = clock()
        w = window(tokens)
        say(event="sample", run=index, t0_mono=t0, t1_mono=clock(), **w)
        return float(w["tok_s_wall"])

    return until_settled(once, runs, settle_pct, budget_s, clock)


def until_settled(once: Callable[[int], float], runs: int, settle_pct: float = SETTLE_PCT,
                  budget_s: float = SETTLE_BUDGET_S, clock: Callable[[], float] = time.monotonic,
                  stop: Callable[[float], bool] = lambda value: False) -> list[float]:
    """`once(i)` `runs` times, then more while the last `runs` values spread over `settle_pct`, for at most
    `budget_s` more seconds and MAX_FACTOR x `runs` in all; a value `stop` refuses (a run that failed) ends it.
    The one settle rule of the timed probes and the concurrency probe's rounds (doctor/probe/streams.py)."""
    values: list[float] = []
    deadline = None
    while True:
        values.append(float(once(len(values))))
        if stop(values[-1]):
            return values
        if len(values) < runs:
            continue
        if deadline is None:
            deadline = clock() + budget_s
        if settled(values, runs, settle_pct) or len(values) >= MAX_FACTOR * runs or clock() >= deadline:
            return values


def settled(values: list[float], runs: int, settle_pct: float) -> bool:
    """The last `runs` values agree within `settle_pct` (fewer than `runs` never do)."""
    return len(values) >= runs and spread_pct(values[-runs:]) <= settle_pct
