"""The timed loops: prefill, warm-up and decode windows, each with the worker's own host counters.

Decode is ExLlamaV2's raw path, `model.forward(last_token, cache)` then a greedy argmax copied
to the CPU, exactly what its `test_inference.py -s` speed test does. It works on every card and
every cache mode (the dynamic generator needs flash-attn for paging and refuses the FP8 cache,
ExLlamaV2Cache_8bit; its Q4/Q6/Q8 caches it takes), and it never stops at EOS. The per-step `.cpu()` synchronises, so wall time is real time.
"""

from __future__ import annotations

import resource
import time
from dataclasses import dataclass
from typing import Any, Callable

from doctor.model.probe_results import DecodeRun
from doctor.probe.hostnoise import HostSnapshot, between


@dataclass(frozen=True)
class HostCounters:
    wall: float
    cpu: float
    minflt: int
    majflt: int

    @staticmethod
    def now() -> "HostCounters":
        r = resource.getrusage(resource.RUSAGE_SELF)
        return HostCounters(time.perf_counter(), r.ru_utime + r.ru_stime, r.ru_minflt, r.ru_majflt)


class Decoder:
    """Greedy single-token decode on an ExLlamaV2 model and cache, wrapping at the cache's end."""

    def __init__(self, torch: Any, model: Any, cache: Any, prompt_ids: Any, clock0: float):
        self.torch, self.model, self.cache = torch, model, cache
        self.prompt_len = prompt_ids.shape[-1]
        self.last = prompt_ids[:, -1:]
        self.clock0 = clock0
        self.high_water = 0  # the longest context met so far

    def step(self) -> None:
        if self.cache.current_seq_len + 1 >= self.cache.max_seq_len:
            self.cache.current_seq_len = self.prompt_len - 1  # reuse the cache from the prompt's end
        logits = self.model.forward(self.last, self.cache)
        self.high_water = max(self.high_water, self.cache.current_seq_len)
        self.last = logits[:, -1, :].argmax(-1, keepdim=True).cpu()

    def steps(self, n: int, every: int = 0, on_chunk: Callable[[int, float], None] | None = None) -> tuple[float, float, int]:
        """Run n steps; returns (seconds, CPU seconds, page faults). `on_chunk(done, chunk_tok_s)` every `every` steps."""
        before = HostCounters.now()
        t_chunk = time.perf_counter()
        for i in range(1, n + 1):
            self.step()
            if on_chunk and every and (i % every == 0 or i == n):
                now = time.perf_counter()
                size = every if i % every == 0 else i % every
                on_chunk(i, size / max(now - t_chunk, 1e-9))
                t_chunk = now
        after = HostCounters.now()
        return (after.wall - before.wall, after.cpu - before.cpu,
                after.minflt - before.minflt + after.majflt - before.majflt)

    def timed_run(self, run: int, tokens: int) -> DecodeRun:
        """One timed window from the prompt's end: every run decodes at the same context."""
        self.cache.current_seq_len = self.prompt_len - 1
        self.torch.cuda.synchronize()
        host_before = HostSnapshot.now()  # outside the timed window: it reads /proc for every process
        before = HostCounters.now()
        for _ in range(tokens):
            self.step()
        self.torch.cuda.synchronize()
        after = HostCounters.now()
        seconds = after.wall - before.wall
        cpu = after.cpu - before.cpu
        noise = between(host_before, HostSnapshot.now(), seconds)
        return DecodeRun(run=run, tokens=tokens, seconds=round(seconds, 6), tok_s=round(tokens / seconds, 3),
                         past_len=self.prompt_len - 1, cpu_s=round(cpu, 4), cpu_wall=round(cpu / seconds, 3),
                         minor_faults=after.minflt - before.minflt, major_faults=after.majflt - before.majflt,
                         t_start_s=round(before.wall - self.clock0, 3), t_end_s=round(after.wall - self.clock0, 3),
                         involuntary_switches=noise.involuntary_switches, steal_pct=noise.steal_pct,
                         cpu_mhz=noise.cpu_mhz, busy_others=noise.busy_others)

    def fresh_lengths(self, tokens: int) -> float:
        """tok/s over `tokens` steps at context lengths this decoder has never met (past everything so far)."""
        self.cache.current_seq_len = max(self.cache.current_seq_len, self.high_water)
        self.torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(tokens):
            self.step()
        self.torch.cuda.synchronize()
        return tokens / (time.perf_counter() - t0)


def time_prefill(torch: Any, model: Any, cache: Any, ids: Any, repeats: int = 3) -> tuple[float, ...]:
    """Seconds to fill the cache with the prompt (all but its last token), `repeats` times, cache reset each time."""
    out = []
    for _ in range(repeats):
        cache.current_seq_len = 0
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        model.forward(ids[:, :-1], cache, preprocess_only=True)
        torch.cuda.synchronize()
        out.append(round(time.perf_counter() - t0, 6))
    return tuple(out)
