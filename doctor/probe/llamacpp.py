"""The llama.cpp probe: time decode of a GGUF on this card in a child process, as the ExLlamaV2 probe does.

Two ways in, whichever is installed: llama-cpp-python (doctor/probe/llamacpp_child.py: the probe's own clock and
llama.cpp's perf counters over the same windows) or an installed llama-bench (its per-run samples). Either way:
warm-up, several runs, settling (leading runs off the later median are dropped and counted), spread, NVML sampled
while it runs, and llama.cpp's own buffer lines parsed from its log. A child that dies without a word (a negative
return code, or no result) is its own outcome, "died-silently", with the signal and the log's last lines: llama.cpp
aborts inside native code, which is not a slow engine.

    python3 -m doctor.probe.llamacpp MODEL.gguf [--backend auto|python|bench] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from importlib import util
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

from doctor.model.engine_probe import LlamaCppProbe, LlamaCppRun, ServerProbe, TransformersProbe, engine_probe_document
from doctor.model.sample_summary import is_busy
from doctor.model.serialize import strict_json
from doctor.probe.more_runs import TimedRunOptions, add_timing_arguments, timing_from

BUFFER = re.compile(r"(?P<dev>[\w.-]+) (?P<kind>model|KV|compute) buffer size\s*=\s*(?P<mib>[\d.]+) MiB")
OFFLOADED = re.compile(r"offloaded (\d+)/(\d+) layers to GPU")
SETTLE_PCT = 3.0


@dataclass(frozen=True)
class ProbeOptions(TimedRunOptions):
    n_ctx: int = 4096
    n_gpu_layers: int = -1  # -1: every layer
    flash_attn: str = "on"  # on | off | auto
    cache_type_k: str = "f16"
    cache_type_v: str = "f16"
    warmup: int = 64
    timeout_s: float = 300.0


def parse_log(text: str) -> tuple[dict[str, dict[str, float]], str]:
    """llama.cpp's buffer lines ({"model"|"kv"|"compute": {device: MiB}}, summed per device) and its offload line."""
    out: dict[str, dict[str, float]] = {}
    for m in BUFFER.finditer(text):
        kind = m.group("kind").lower()
        dev = out.setdefault(kind, {})
        dev[m.group("dev")] = round(dev.get(m.group("dev"), 0.0) + float(m.group("mib")), 2)
    off = OFFLOADED.findall(text)
    return out, (f"offloaded {off[-1][0]}/{off[-1][1]} layers to GPU" if off else "")


def settle(runs: list[LlamaCppRun], pct: float = SETTLE_PCT) -> tuple[tuple[LlamaCppRun, ...], int]:
    """Drop leading runs more than pct slower than the median of the runs after them (a card still ramping its
    clocks). Only slower: a fast first run is no ramp, and dropping it let a noisy, host-bound decode (Transformers
    + bitsandbytes on the H200, 2026-12-03) shed three of five runs and report the median of the two slowest."""
    kept = list(runs)
    dropped = 0
    while len(kept) > 2:
        rest = statistics.median(r.tok_s_wall for r in kept[1:])
        if kept[0].tok_s_wall >= rest * (1 - pct / 100):
            break
        kept.pop(0)
        dropped += 1
    return tuple(kept), dropped


P = TypeVar("P", LlamaCppProbe, TransformersProbe, ServerProbe)


def summarize(probe: P, runs: list[LlamaCppRun], asked: int = 0) -> P:
    """The settled runs' median, spread and wall-vs-engine-clock difference, for any engine's probe result. When the
    child ran more than the `asked` runs (their spread was over the settle line), the last `asked` are the window."""
    if asked and len(runs) > asked:
        kept, dropped = tuple(runs[-asked:]), len(runs) - asked
    else:
        kept, dropped = settle(runs)
    if not kept:
        return probe
    wall = [r.tok_s_wall for r in kept]
    med = statistics.median(wall)
    perf = [r.tok_s_perf for r in kept if r.tok_s_perf]
    vs = round(100 * (med / statistics.median(perf) - 1), 2) if perf else None
    return replace(probe, runs=tuple(runs), dropped_runs=dropped, median_tok_s=round(med, 2),
                   spread_pct=round(100 * (max(wall) - min(wall)) / med, 2), wall_vs_perf_pct=vs, asked_runs=asked)


def gpu_summary(series: Any, index: int, runs: list[LlamaCppRun] | tuple[LlamaCppRun, ...] = ()) -> dict:
    """NVML while decoding: the samples inside the timed windows when the child said when they ran (every engine's
    probe child does), else the samples where the card was not idle (llama-bench says nothing of its windows).
    Medians of the SM and memory clocks and utilisation, whatever the utilisation: a launch-bound engine that keeps
    the card 20% busy is exactly what the verdict must see (the filter at 50% left Transformers' null over 558 samples)."""
    gpu = series.gpu(index) if series is not None and hasattr(series, "gpu") else None
    if gpu is None:
        return {}
    spans = [(r.t_start_s, r.t_end_s) for r in runs if r.t_start_s is not None and r.t_end_s is not None]
    if spans:
        decoding = [x for x in gpu.samples if any(a <= x.t_s <= b for a, b in spans)]
    else:
        decoding = [x for x in gpu.samples if is_busy(x)]

    def med(values: list) -> float | None:
        return round(statistics.median(values), 1) if values else None

    used = [x.memory_used_mib for x in gpu.samples if x.memory_used_mib is not None]
    return {"gpu_sm_clock_mhz": med([x.sm_clock_mhz for x in decoding if x.sm_clock_mhz]),
            "gpu_mem_clock_mhz": med([x.mem_clock_mhz for x in decoding if x.mem_clock_mhz]),
            "gpu_util_pct": med([x.util_gpu_pct for x in decoding if x.util_gpu_pct is not None]),
            "gpu_memory_used_mib": max(used) if used else None, "gpu_samples": len(gpu.samples),
            "gpu_decode_samples": len(decoding)}


def _sampler(index: int, pid: int) -> Any:
    try:
        from doctor.facts.sampling.sampler import Sampler  # lazy: NVML only while a probe runs

        return Sampler([index], pids=[pid], hz=10).start()
    except Exception:  # no NVML: the probe still times, the verdict says it could not see the card
        return None


def _ended(proc: subprocess.Popen, timeout_s: float, started: float) -> str:
    try:
        proc.wait(timeout=max(1.0, timeout_s - (time.monotonic() - started)))
        return ""
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return "timeout"


def _died(rc: int | None, tail: str) -> str:
    if rc is not None and rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = f"signal {-rc}"
        return f"the engine died with {name} and no error of its own; last log line: {tail.splitlines()[-1] if tail else '(none)'}"
    return f"the engine exited with code {rc} before reporting a result; last log line: {tail.splitlines()[-1] if tail else '(none)'}"


def run_python(model: str, o: ProbeOptions, python: str = sys.executable, extra_env: dict | None = None,
               sampler: Callable[[int, int], Any] = _sampler) -> LlamaCppProbe:
    """The llama-cpp-python way in: the child times each window with its own clock and llama.cpp's counters."""
    cmd = [python, "-X", "faulthandler", "-m", "doctor.probe.llamacpp_child", "--model", model, "--n-ctx", str(o.n_ctx),
           "--ngl", str(o.n_gpu_layers), "--fa", o.flash_attn, "--ctk", o.cache_type_k, "--ctv", o.cache_type_v,
           *o.child_args()]
    return _run(cmd, "llama-cpp-python", model, o, _child_events, extra_env, sampler)


def run_bench(model: str, o: ProbeOptions, binary: str = "llama-bench", extra_env: dict | None = None,
              sampler: Callable[[int, int], Any] = _sampler) -> LlamaCppProbe:
    """The llama-bench way in: its own warm-up run, then `runs` timed runs of `tokens` tokens (tg), samples per run."""
    fa = o.flash_attn  # llama-bench of llama-cpp-python 0.3.36's llama.cpp takes -fa on|off|auto (older builds: 1|0)
    o = replace(o, n_ctx=o.tokens, warmup=o.tokens)  # llama-bench's context is its prompt + generated tokens; one warm-up run
    cmd = [binary, "-m", model, "-ngl", str(o.n_gpu_layers if o.n_gpu_layers >= 0 else 999), "-p", "0",
           "-n", str(o.tokens), "-r", str(o.runs), "-fa", fa, "-ctk", o.cache_type_k, "-ctv", o.cache_type_v,
           "-o", "jsonl", "-v"]
    return _run(cmd, "llama-bench", model, o, _bench_events, extra_env, sampler)


def sample_run(ev: dict, mono0: float | None) -> LlamaCppRun:
    """A child's `sample` event as a run, its window moved onto the sampler's clock (both are CLOCK_MONOTONIC)."""
    a, b = ev.get("t0_mono"), ev.get("t1_mono")
    start = end = None
    if mono0 is not None and isinstance(a, (int, float)) and isinstance(b, (int, float)):
        start, end = round(a - mono0, 3), round(b - mono0, 3)
    return LlamaCppRun(int(ev["tokens"]), float(ev["tok_s_wall"]), ev.get("tok_s_perf"), start, end)


def json_events(lines: list[str]) -> Iterator[dict[str, Any]]:
    """The JSON objects among an engine child's lines; anything else it printed is passed over."""
    for line in lines:
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if isinstance(ev, dict):
            yield ev


def _child_events(lines: list[str], mono0: float | None = None) -> tuple[list[LlamaCppRun], str, bool]:
    runs, error, done = [], "", False
    for ev in json_events(lines):
        if ev.get("event") == "sample":
            runs.append(sample_run(ev, mono0))
        elif ev.get("event") == "error":
            error = f"{ev.get('kind')}: {ev.get('message')}"
        elif ev.get("event") == "done":
            done = True
    return runs, error, done


def _bench_events(lines: list[str], mono0: float | None = None) -> tuple[list[LlamaCppRun], str, bool]:
    runs: list[LlamaCppRun] = []
    for row in json_events(lines):  # llama-bench -o jsonl: one row per test
        if row.get("n_gen") and not row.get("n_prompt"):
            runs += [LlamaCppRun(int(row["n_gen"]), float(x)) for x in row.get("samples_ts", [])]
    return runs, "", bool(runs)


def _run(cmd: list[str], backend: str, model: str, o: ProbeOptions, read: Callable, extra_env: dict | None,
         sampler: Callable[[int, int], Any]) -> LlamaCppProbe:
    base = LlamaCppProbe(backend=backend, outcome="error", model_path=model, n_ctx=o.n_ctx, flash_attn=o.flash_attn,
                         cache_type_k=o.cache_type_k, cache_type_v=o.cache_type_v, n_gpu_layers=o.n_gpu_layers,
                         warmup_tokens=o.warmup)
    ran = spawn_engine_child(cmd, o.timeout_s, o.gpu_index, extra_env, sampler)
    if isinstance(ran, str):
        return replace(base, outcome="not-installed", error=ran)
    runs, error, done = read(ran.lines, ran.mono0)
    asked = o.runs if backend == "llama-cpp-python" else 0
    buffers, offloaded = parse_log(ran.log)
    probe = replace(base, returncode=ran.returncode, buffers_mib=buffers, offloaded=offloaded, log_tail=ran.tail,
                    seconds=ran.seconds, **gpu_summary(ran.series, o.gpu_index, runs))
    if ran.ended:
        return summarize(replace(probe, outcome="timeout", error=f"no result within {o.timeout_s:g} s"), runs, asked)
    if error:
        return replace(probe, outcome="error", error=error)
    if not done or ran.returncode != 0:
        return summarize(replace(probe, outcome="died-silently", error=_died(ran.returncode, ran.tail)), runs, asked)
    return summarize(replace(probe, outcome="ok"), runs, asked)


@dataclass(frozen=True)
class ChildRun:
    """What an engine's probe child left: its stdout lines (the events), its stderr (the engine's log), whether the
    deadline ended it, and the NVML samples taken while it ran. One spawn-sample-collect path for every engine."""
    lines: list[str]
    log: str
    ended: str
    series: Any
    returncode: int | None
    seconds: float
    mono0: float | None = None  # time.monotonic() as the sampler started: its samples' zero

    @property
    def tail(self) -> str:
        return "\n".join(ln for ln in self.log.splitlines()[-12:] if ln.strip())


def spawn_engine_child(cmd: list[str], timeout_s: float, gpu_index: int, extra_env: dict | None,
              sampler: Callable[[int, int], Any]) -> ChildRun | str:
    """Start `cmd` with its output in temporary files, sample the GPU while it runs, stop it at the deadline; the
    reason as a string when it cannot start (the engine's program is missing)."""
    import os  # lazy: the child's environment is built only when a probe starts

    env = {**os.environ, **(extra_env or {}), "PYTHONUNBUFFERED": "1"}
    started = time.monotonic()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        try:
            proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env, text=True)
        except OSError as exc:
            return f"{cmd[0]}: {exc.strerror}"
        mono0 = time.monotonic()
        s = sampler(gpu_index, proc.pid)
        ended = _ended(proc, timeout_s, started)
        series = s.stop() if s is not None else None
        out.seek(0)
        err.seek(0)
        lines, log = out.read().splitlines(), err.read()
    return ChildRun(lines, log, ended, series, proc.returncode, round(time.monotonic() - started, 2), mono0)


def probe(model: str, o: ProbeOptions = ProbeOptions(), backend: str = "auto",
          sampler: Callable[[int, int], Any] = _sampler) -> list[LlamaCppProbe]:
    """Run the probe the way that is installed; with `auto`, a silent death of llama-cpp-python is followed by
    llama-bench when it is installed (both results are returned, the death first)."""
    has_python = util.find_spec("llama_cpp") is not None
    bench = shutil.which("llama-bench")
    results: list[LlamaCppProbe] = []
    if backend in ("auto", "python") and has_python:
        results.append(run_python(model, o, sampler=sampler))
        if results[-1].outcome == "ok" or backend == "python":
            return results
    if backend in ("auto", "bench") and bench:
        results.append(run_bench(model, o, bench, sampler=sampler))
    if not results:
        results.append(LlamaCppProbe(backend=backend, outcome="not-installed", model_path=model,
                                     error="neither llama-cpp-python nor llama-bench is installed"))
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m doctor.probe.llamacpp", description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("--backend", choices=("auto", "python", "bench"), default="auto")
    ap.add_argument("--bench-binary", default=None, help="llama-bench to use (default: the one on PATH)")
    ap.add_argument("--n-ctx", type=int, default=4096)
    ap.add_argument("--ngl", type=int, default=-1)
    ap.add_argument("--fa", choices=("on", "off", "auto"), default="on")
    ap.add_argument("--ctk", default="f16")
    ap.add_argument("--ctv", default="f16")
    add_timing_arguments(ap, warmup=64)
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    o = ProbeOptions(n_ctx=a.n_ctx, n_gpu_layers=a.ngl, flash_attn=a.fa, cache_type_k=a.ctk, cache_type_v=a.ctv,
                     timeout_s=a.timeout, **timing_from(a))
    if a.backend == "bench" and a.bench_binary:
        results = [run_bench(a.model, o, a.bench_binary)]
    else:
        results = probe(a.model, o, a.backend)
    if a.json:  # v100-doctor/engine-probe/1 (doctor/schema/engine-probe-1.json)
        doc = engine_probe_document("llamacpp-probe", model=a.model, llamacpp=results)
        Path(a.json).write_text(strict_json(doc, indent=1) + "\n")
    for r in results:
        print(f"{r.backend}: {r.outcome} median {r.median_tok_s} tok/s spread {r.spread_pct}% wall-vs-perf "
              f"{r.wall_vs_perf_pct}% {r.offloaded} buffers {r.buffers_mib} {r.error}")
    return 0 if results and results[-1].outcome == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
