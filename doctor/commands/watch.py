"""Watch a running inference server: sample the GPU (clocks, throttle reasons, temperatures, power,
utilisation, PCIe traffic, memory) and the server's process (RSS, CPU) while you send it requests,
then report throttling, CPU offload, competing processes, the PCIe link and memory health with the
same findings and report format as the main command.

Read-only: the watched process is never signalled, paused or reprioritised; the doctor only reads
NVML and /proc. Progress goes to stderr; stdout carries only the report.

examples:
  v100-doctor watch --pid 4242                   watch a server for 30 s while you send it requests
  v100-doctor watch --pid 4242 --seconds 120 -v  longer, with every sample in the text report
  v100-doctor watch --pid 4242 --config serve.py --model /models/qwen27b
                                                 also read the launch script's offload settings and
                                                 compare the process's VRAM with the model's size
  v100-doctor watch --json -o watch.json         the whole GPU (no --pid), JSON for a support ticket
  v100-doctor watch --engine-url http://127.0.0.1:8080 --seconds 60
                                                 also read the server's own counters (llama-server with
                                                 --metrics, vLLM, Ollama): requests in flight and queued,
                                                 slots busy, tokens served per second, beside the GPU's

exit codes: below (and docs/reference/exit-codes.md).
"""

from __future__ import annotations

import argparse
import shutil
import signal
import sys
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from checks.env.gpu_present import CHECK as GPU_PRESENT
from checks.manifest import RUNTIME_CHECKS, SERVING_CHECKS
from doctor.cli.options import add_output_arguments, engine_server, gpu_index, one_model, path_arg, positive_int, sample_hz, seconds_timeout, watch_seconds
from doctor.cli.output import emit
from doctor.facts.children import interrupts_ignored
from doctor.facts.engines import servers as engine_servers
from doctor.facts.engines.launch_config import read_launch_config
from doctor.facts.engines.tabby_config import describe
from doctor.facts.hub.model_id import resolve
from doctor.facts.modeldir.directory import gather_model
from doctor.facts.sampling import sampler as sampling
from doctor.facts.sampling.host_reader import owner_problem
from doctor.model import server_summary
from doctor.model.engines import EngineServer
from doctor.model.errors import UsageError
from doctor.model.exitcodes import ExitCode, interrupt_exit
from doctor.model.plan import Plan
from doctor.model.samples import ServerSeries
from doctor.render.untrusted import visible
from doctor.run import pipeline

if TYPE_CHECKING:
    from doctor.model.facts import Facts
    from doctor.model.model_dir import ModelFacts


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("what to watch")
    g.add_argument("--pid", type=positive_int, metavar="PID",
                   help="the server's process id (its children count as the server too); without it the whole GPU is watched")
    g.add_argument("--seconds", type=watch_seconds, default=30.0, metavar="N",
                   help="how long to sample (default 30; send the server requests meanwhile)")
    g.add_argument("--hz", type=sample_hz, default=5.0, metavar="HZ", help="samples per second, 0.2 to 10 (default 5)")
    g.add_argument("--nvml-timeout", type=seconds_timeout, default=15.0, metavar="S",
                   help="give up on the NVIDIA driver's NVML (read in a child process) when it has not answered a "
                        "reading for S seconds (default 15)")
    g.add_argument("--gpu", type=gpu_index, default=0, metavar="INDEX", dest="gpu_index", help="which GPU (default 0)")
    g.add_argument("--engine-url", metavar="URL", default=None,
                   help="the engine server on loopback: judged as the engine it answers as (llama-server, vLLM, "
                        "Ollama, TabbyAPI, LM Studio), and its own counters read through the window beside the GPU's: "
                        "llama-server (/metrics with --metrics, /slots), vLLM (/metrics), Ollama (/api/ps): requests "
                        "in flight and queued, slots busy, tokens served per second")
    g.add_argument("--config", metavar="FILE", type=path_arg,
                   help="the server's launch script or config (Python, shell, JSON, YAML): scanned for device_map, "
                        "max_memory and offload settings; a TabbyAPI config.yml also names the model it loads")
    g.add_argument("--model", metavar="PATH", action="append", type=path_arg,
                   help="the model directory the server loaded, so its VRAM can be compared with the model's size")
    add_output_arguments(p)


def _progress_line(sampler: sampling.Sampler, index: int, seconds: float, label: str,
                   server: ServerWatch | None = None, width: int | None = None) -> str:
    """The live line: the GPU's clocks, utilisation, temperature and PCIe traffic, then the server's figures. Within
    `width` (a terminal's columns: a wrapped line cannot be redrawn in place) PCIe and temperature give way first."""
    s = sampler.latest(index)
    head = f"watching {label}: {min(sampler.elapsed_s, seconds):.0f}/{seconds:.0f} s"
    said = [server.live()] if server is not None else []
    if s is None:
        return _fit([head, *said], (), width)
    rx = f"{s.pcie_rx_mbs / 1000:.2f} GB/s" if s.pcie_rx_mbs is not None else "–"
    reasons = ",".join(r for r in (s.reasons or ()) if r != "gpu_idle") or ("idle" if s.reasons else "")
    temp, pcie = _or_dash(s.temperature_c, " °C"), f"PCIe RX {rx}"
    parts = [head, f"SM {_or_dash(s.sm_clock_mhz, ' MHz')}", f"mem {_or_dash(s.mem_clock_mhz, ' MHz')}",
             f"util {_or_dash(s.util_gpu_pct, '%')}", temp, pcie, *([reasons] if reasons else []), *said]
    return _fit(parts, (pcie, temp), width)


def _fit(parts: list[str], spare: tuple[str, ...], width: int | None) -> str:
    """The parts joined with " · ", dropping the spare ones (in order) and then cutting to fit `width`."""
    line = " · ".join(parts)
    for part in spare:
        if width is None or len(line) < width:
            break
        parts = [p for p in parts if p is not part]
        line = " · ".join(parts)
    return line if width is None or len(line) < width else line[: width - 2] + "…"


def _or_dash(value: object, unit: str) -> str:
    """A reading the driver did not give is "–", not "None"."""
    return "–" if value is None else f"{value}{unit}"


def _gather(plan: Plan, nvml_timeout_s: float) -> Facts:
    """The machine's facts, read before sampling starts: the torch child initialises CUDA, and its short-lived
    context would otherwise show up in the samples as a process competing for the GPU."""
    print("v100-doctor: reading the machine (driver, torch, host)...", file=sys.stderr)
    try:
        return pipeline.gather(plan, pipeline.GatherOptions(nvml_timeout_s=nvml_timeout_s))
    except Exception as exc:  # noqa: BLE001 - one line, not a traceback
        raise UsageError(f"could not read this machine's facts: {type(exc).__name__}: {exc}") from None


def _model_facts(paths: list[str] | None) -> ModelFacts | None:
    if not paths:
        return None
    path = " ".join(paths)

    model = gather_model(path)
    if model.kind in ("missing", "unreadable"):
        raise UsageError(f"--model {path}: {model.problem or 'cannot be read'}")
    return model


INTERRUPTED_WAIT_S = 0.3  # after a signal, how long a sample or the end counters may still take: then the report
NVML_BROKEN = ("NVML did not answer", "NVML crashed")  # doctor/facts/nvml/isolated.py's reasons for a broken driver


def _needs_the_gpu(machine: Facts, index: int) -> None:
    """watch samples a GPU: without one (or without that index) it says so at once, instead of sampling nothing."""
    if machine.gpu(index) is not None:
        return
    if not machine.nvml.available and machine.nvml.reason.startswith(NVML_BROKEN):
        return  # a hung or crashing NVML is a finding of its own: the report says NVML was not read (issue 25)
    if not machine.nvml.available or not machine.nvml.gpus:
        why = machine.nvml.reason or "NVML sees no GPU"
        raise UsageError(f"watch samples a GPU through NVML, and this machine has none ({why}); run it on the GPU "
                         "server, or judge a saved report with v100-doctor --replay REPORT")
    have = ", ".join(str(g.index) for g in machine.nvml.gpus)
    raise UsageError(f"--gpu {index}: this machine has GPU {have} (NVML numbers, as nvidia-smi shows them)")


def _engine_lines(reading: engine_servers.ServerReading, when: str) -> None:
    for line in engine_servers.describe(reading):
        print(visible(f"v100-doctor: {when}: {line}"), file=sys.stderr)


SERVER_EVERY_S = 2.0  # how often the engine server's counters are read during the window
LIVE_READINGS = 8  # the live line's figures come from the last readings only (one that answered, and the one before)


class ServerWatch:
    """The engine server's counters read every SERVER_EVERY_S through the window (and once at its end), by the
    endpoints of the flavour it answered as."""

    def __init__(self, url: str, flavour: str = "") -> None:
        self.url = url
        self.flavour = flavour
        self.readings: list[tuple[float, engine_servers.ServerReading]] = []
        self.last = -SERVER_EVERY_S

    def read(self) -> engine_servers.ServerReading:
        return engine_servers.read_server(self.url, flavour=self.flavour)

    def tick(self, t_s: float, force: bool = False) -> None:
        if not force and t_s - self.last < SERVER_EVERY_S:
            return
        self.last = t_s
        self.readings.append((round(t_s, 2), self.read()))

    def series(self) -> ServerSeries:
        return engine_servers.series(self.url, self.readings, self.flavour)

    def live(self) -> str:
        """The server's figures for the live line: requests in flight and queued, slots busy, and the tokens it served
        per second between its last two readings (only the last few are read again: the line is drawn 4 times a
        second through a window of any length)."""
        series = engine_servers.series(self.url, self.readings[-LIVE_READINGS:], self.flavour)
        name = server_summary.label(series.kind)
        if not series.samples:
            return f"{name}: not read yet"
        last = series.samples[-1]
        if series.kind in server_summary.NO_COUNTERS:
            return f"{name}: no request counters"
        if not server_summary.answered(last):
            return f"{name}: not answering ({last.error or 'no counters'})"[:100]
        now = server_summary.now_text(last)
        earlier = [x for x in series.samples[:-1] if server_summary.answered(x)]
        rate = server_summary.served_tok_s(earlier[-1], last) if earlier else None
        served = f", {rate:.0f} tok/s served (last {last.t_s - earlier[-1].t_s:.0f} s)" if rate is not None else ""
        return f"{name}: {now}{served}"


def _identify(args: argparse.Namespace) -> EngineServer:
    """Who answers at --engine-url, asked as `probe --engine-url` asks (doctor/probe/served/identify.py), so that the
    checks judge that engine; a URL where nothing answers at all is the user's to fix (exit 3)."""
    try:
        engine_servers.loopback_url(args.engine_url)
    except engine_servers.NotLoopback as exc:
        raise UsageError(str(exc)) from None
    server = engine_server(args)
    assert server is not None  # --engine-url was given
    if server.problem:
        first = engine_servers.read_server(args.engine_url)
        if not first.metrics and not first.slots and not first.models:
            raise UsageError(f"--engine-url {server.problem}")
        print(visible(f"v100-doctor: {server.problem}; reading its counters as {first.kind}"), file=sys.stderr)
    else:
        version = f" {server.version}" if server.version else ""
        print(visible(f"v100-doctor: the server at {server.url} answers as {server.label}{version}"), file=sys.stderr)
    return server


def run(args: argparse.Namespace) -> int:
    one_model(args.model)
    if args.pid is not None and (problem := owner_problem(args.pid)):
        raise UsageError(problem)
    launch = None
    if args.config:
        launch = read_launch_config(args.config)
        if launch.error:
            raise UsageError(f"--config {launch.error}")
        if launch.tabby is not None:  # TabbyAPI's config.yml, read as --tabby-config reads it
            print(visible(f"v100-doctor: TabbyAPI config {args.config}: {describe(launch.tabby)}"), file=sys.stderr)
            if not args.model and launch.tabby.model_path:
                args.model = [launch.tabby.model_path]
    if args.model:  # org/name[@rev]: the HF cache's folder, or planned from the Hub's headers (doctor/facts/hub/model_id.py)
        if found := resolve(" ".join(args.model)):
            args.model = [found[0]]
            print(f"v100-doctor: {found[1]}", file=sys.stderr)
    identified = _identify(args) if args.engine_url else None
    server = ServerWatch(args.engine_url, "" if identified is None or identified.problem else identified.flavour) \
        if args.engine_url else None
    if server is not None:
        _engine_lines(server.read(), "start")
    plan = Plan(gpu_index=args.gpu_index, model_path=" ".join(args.model) if args.model else None,
                engine_server=identified if identified is not None and not identified.problem else None)
    model = _model_facts(args.model)
    machine = _gather(plan, args.nvml_timeout)
    _needs_the_gpu(machine, args.gpu_index)
    label = f"pid {args.pid}" if args.pid else f"GPU {args.gpu_index}"
    # NVML is sampled in a child, each reading within --nvml-timeout; not at all where the snapshot's child found
    # it hanging, crashing or absent
    refused = "" if machine.nvml.available else f"NVML not read: {machine.nvml.reason}"
    sampler = sampling.Sampler([args.gpu_index], pids=[args.pid] if args.pid else None, hz=args.hz,
                               nvml_refused=refused, nvml_timeout_s=args.nvml_timeout)
    errors: list[str] = []
    exit_override: int | None = None
    interrupted = False
    tty = sys.stderr.isatty()
    last_print = -10.0
    pad = 0  # the live line's longest so far, within the terminal: a shorter one overwrites it whole
    try:
        sampler.start()
        while sampler.elapsed_s < args.seconds:
            if server is not None:
                server.tick(sampler.elapsed_s)
            if sampler.nvml_failure:  # a hang or a crash inside NVML: nothing more will come from the GPU
                errors.append(f"{sampler.nvml_failure}; the window ended after {sampler.elapsed_s:.1f} s of "
                              f"{args.seconds:.0f} s, and the report keeps what was sampled until then")
                break
            if args.pid and sampler.watched_all_exited():
                errors.append(f"pid {args.pid} exited after {sampler.elapsed_s:.1f} s of the {args.seconds:.0f} s window; "
                              "the findings use what was sampled until then")
                exit_override = ExitCode.USAGE
                break
            if tty or sampler.elapsed_s - last_print >= 5:
                end = "\r" if tty else "\n"
                cols = shutil.get_terminal_size((200, 24)).columns if tty else None
                line = _progress_line(sampler, args.gpu_index, args.seconds, label, server, cols)
                pad = min(max(pad, len(line)), cols - 1) if cols else 0
                sys.stderr.write(line.ljust(pad) + end)
                sys.stderr.flush()
                last_print = sampler.elapsed_s
            time.sleep(0.25)
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM/SIGHUP raised as Interrupted by the CLI
        signum = getattr(exc, "signum", None)
        by = f" by {signal.Signals(signum).name}" if signum else ""
        errors.append(f"interrupted{by} after {sampler.elapsed_s:.1f} s of the {args.seconds:.0f} s window; "
                      "the findings use what was sampled until then")
        exit_override, interrupted = interrupt_exit(signum), True
    with interrupts_ignored(interrupted):  # a second signal must not cut the report short
        series = sampler.stop(wait_s=INTERRUPTED_WAIT_S if interrupted else None)  # a hung NVML call waits no more
        if series.nvml_stopped and not any(series.nvml_stopped in e for e in errors):  # it failed at the window's end
            errors.append(f"{series.nvml_stopped}; the report keeps what was sampled until then")
        if tty:
            sys.stderr.write(" " * pad + "\r")
        sys.stderr.write(f"v100-doctor: sampled {series.duration_s:.1f} s ({len(series.gpus[0].samples) if series.gpus else 0} "
                         f"samples at {series.hz:g} Hz)\n")
        note = f"watch {label} for {series.duration_s:.0f} s at {series.hz:g} Hz"
        if server is not None:
            server.tick(series.duration_s, force=not interrupted)
            series = replace(series, server=server.series())
        facts = replace(machine, samples=replace(series, note=note), launch_config=launch, model=model)
        serving = list(SERVING_CHECKS) if server is not None else []
        report = pipeline.diagnose(plan, facts, note=note, checks=[GPU_PRESENT, *RUNTIME_CHECKS, *serving])
        report = replace(report, errors=tuple(errors))
        for e in errors:
            print(f"v100-doctor: {e}", file=sys.stderr)
        if server is not None:
            _engine_lines(server.readings[-1][1] if server.readings else server.read(), "end")
        code = emit(report, args)
    return exit_override if exit_override is not None else code
