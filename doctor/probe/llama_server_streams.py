"""`probe --streams` with llama.cpp in force: the doctor starts the user's own llama-server (the binary the engine facts
found on PATH) on the GGUF, on 127.0.0.1 at a free port, with one slot per stream of the largest round
(`--parallel N -c N x the context per stream -ngl 999 --metrics`, their flash-attn and K/V cache settings as the
launch config gives them), waits for its /health (bounded), drives it with the --engine-url rounds
(doctor/probe/streams.py), and always stops it: at the end, on a failure, and on Ctrl-C, SIGTERM or SIGHUP (its own
session, registered with doctor.facts.children so the CLI's stop_all ends it too; SIGTERM, then SIGKILL).

llama-server's flags and /health: https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md (503
while the model loads, 200 once ready; -c is shared by the --parallel slots, each gets -c / N).
"""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, replace
from typing import IO, Callable

from doctor.facts.children import interrupts_held, reap, spawn
from doctor.model.ids import FailureKind
from doctor.model.probe_results import ProbeReport
from doctor.model.streams import StreamsProbe, StreamsRound, rounds_said
from doctor.probe.child import child_env, kill_group
from doctor.probe.errors import tail
from doctor.probe.served.http import ServerError, request_json
from doctor.probe.streams import StreamsOptions, probe_streams

HEALTH_S = 300.0  # a large GGUF read from a slow disk; past this the server is stopped and the probe says so
LLAMA_SERVER = "https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md"
ENGINE = "llama.cpp"  # ProbeReport.engine


@dataclass(frozen=True)
class ServerLaunch:
    """How the doctor starts llama-server for the rounds: one slot per stream of the largest round."""

    binary: str
    model: str
    slots: int
    context: int  # tokens per slot (stream)
    flash_attn: str = "on"
    cache_type_k: str = "f16"
    cache_type_v: str = "f16"
    gpu_index: int = 0

    def command(self, port: int) -> list[str]:
        return [self.binary, "-m", self.model, "--host", "127.0.0.1", "--port", str(port), "--parallel", str(self.slots),
                "-c", str(self.slots * self.context), "-ngl", "999", "--metrics", "-fa", self.flash_attn,
                "-ctk", self.cache_type_k, "-ctv", self.cache_type_v]

    def said(self) -> str:
        return (f"the doctor started {os.path.basename(self.binary)} with --parallel {self.slots} -c "
                f"{self.slots * self.context} -ngl 999 -fa {self.flash_attn} (-ctk {self.cache_type_k} -ctv "
                f"{self.cache_type_v}): {self.slots} slots of {self.context} tokens, which llama-server batches "
                f"({LLAMA_SERVER})")


def free_port() -> int:
    """A port on 127.0.0.1 nothing listens on now (the OS's pick)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_healthy(proc: subprocess.Popen, url: str, limit_s: float, log: IO[str]) -> str:
    """"" once llama-server's /health says ok; else why not (it exited, or was not ready within limit_s)."""
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        code = proc.poll()
        if code is not None:
            return f"llama-server exited (code {code}) before it was ready: {_last_line(log)}"
        try:
            doc = request_json(url + "/health", timeout_s=2.0)
            if not isinstance(doc, dict) or doc.get("status") in ("ok", None):
                return ""
        except ServerError:
            pass  # refused while it starts, 503 while the model loads
        time.sleep(0.25)
    return f"llama-server was not ready within {limit_s:g} s (its /health): it was stopped; {_last_line(log)}"


def _last_line(log: IO[str]) -> str:
    log.flush()
    log.seek(0)
    lines = [x for x in log.read().splitlines() if x.strip()]
    return lines[-1][:300] if lines else "it printed nothing"


def drive(launch: ServerLaunch, options: StreamsOptions, say: Callable[[str], None] = lambda text: None,
          health_s: float = HEALTH_S) -> ProbeReport:
    """Start llama-server, time the rounds against it, stop it; a ProbeReport whatever happened (never raises,
    except that an interrupt is reported as `cancelled` with the rounds finished before it)."""
    started = time.monotonic()
    rounds: list[StreamsRound] = []
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    base = StreamsProbe(url, "/v1/completions", launch.model, options.tokens, engine="llama-server", mode="parallel",
                        mode_why=launch.said(), context_per_stream=launch.context, cache_mode=launch.cache_type_k)
    env = child_env({"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_VISIBLE_DEVICES": str(launch.gpu_index)}
                    if launch.gpu_index and "CUDA_VISIBLE_DEVICES" not in os.environ else {})
    log = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
    proc = None
    probe, status, kind, signum = base, "ok", "", 0
    try:
        say(f"starting {' '.join(launch.command(port))} ...")
        try:
            with interrupts_held():  # a signal during the start is raised once `proc` is known, so it is stopped
                proc = spawn(launch.command(port), stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env)
        except OSError as exc:
            return _report(replace(base, error=f"cannot start {launch.binary}: {exc.strerror or exc}"), "failed",
                           FailureKind.NOT_INSTALLED, started, "")
        problem = wait_healthy(proc, url, health_s, log)
        if problem:
            probe, status = replace(base, error=problem), "failed"
            kind = FailureKind.OOM if "out of memory" in _whole(log).lower() else FailureKind.MODEL_LOAD
        else:
            say(f"llama-server ready at {url} ({launch.slots} slots)")
            got = probe_streams(url, options, say, on_round=rounds.append)
            probe = replace(got, engine=base.engine, mode=base.mode, mode_why=base.mode_why,
                            context_per_stream=base.context_per_stream, cache_mode=base.cache_mode, model=launch.model)
            status = "ok" if any(r.total_tok_s > 0 for r in probe.rounds) else "failed"
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM/SIGHUP (doctor.model.errors.Interrupted)
        signum = int(getattr(exc, "signum", 0) or 0)
        probe, status, kind = replace(base, rounds=tuple(rounds), error="cancelled"), "cancelled", FailureKind.CANCELLED
    finally:
        if proc is not None:
            kill_group(proc)
            reap(proc)
        detail = tail(_whole(log)) if status != "ok" else ""
        log.close()
    return _report(probe, status, kind, started, detail, signum)


def _whole(log: IO[str]) -> str:
    try:
        log.flush()
        log.seek(0)
        return log.read()
    except ValueError:  # closed
        return ""


def _report(probe: StreamsProbe, status: str, kind: str, started: float, detail: str, signum: int = 0) -> ProbeReport:
    seconds = round(time.monotonic() - started, 2)
    said = rounds_said(probe.rounds)
    summary = (f"llama-server --parallel: {said}" if said and status == "ok" else
               f"{said}; then {probe.error}" if said else f"the concurrency probe could not run: {probe.error}")
    return ProbeReport(status=status, summary=summary, model_path=probe.model, streams=replace(probe, seconds=seconds),
                       seconds=seconds, asked=True, engine=ENGINE, error_kind=kind, error_phase="streams" if kind else "",
                       error_detail=detail[-4000:], interrupted_by=signum)
