"""The command line. Headless: imports neither textual nor torch at start-up.

stdout carries only the chosen output (text, Markdown or JSON); diagnostics go to stderr.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import signal
import sys
from types import FrameType
from typing import TYPE_CHECKING, Any, Sequence, TypeGuard

from doctor import start_guard_handed_back
from doctor.cli.hangup import end_within
from doctor.cli.model_first import refuse_non_model
from doctor.cli.options import SUBCOMMANDS, Parser, build_parser, plan_from_args, run_from_args, select_checks, source_from_args, wants_tui
from doctor.cli.output import ReportOutputs, flush_stdout, prepare_streams, write_report_file
from doctor.facts.children import INTERRUPTS, interrupts_ignored, stop_all
from doctor.model.errors import InputError, Interrupted, OutputFailed, UsageError
from doctor.model.exitcodes import ExitCode, command_exit_help, interrupt_exit
from doctor.render.untrusted import visible

if TYPE_CHECKING:
    from checks.base import Check
    from doctor.facts.python.torch_facts import TorchGatherer


def start_torch_early(args: argparse.Namespace) -> TorchGatherer | None:
    """Start the torch child before importing the checks: its ~1.5 s import then overlaps everything else."""
    if args.replay or args.list_checks or args.list_gpus or wants_tui(args):
        return None  # the TUI gathers in its own worker
    from doctor.facts.python.torch_facts import TorchGatherer  # lazy: only a live run starts the torch child; --version and replays never load it

    return TorchGatherer(timeout_s=args.torch_timeout, fresh=args.fresh, use_cache=not args.no_cache)


def run_main(args: argparse.Namespace) -> int:
    try:
        return _run_main(args)
    except KeyboardInterrupt as exc:  # Ctrl-C, SIGTERM, SIGHUP before the checks ran: -o gets what was read
        if not (args.replay or args.list_checks or args.list_gpus):
            write_partial_report(exc, args, None)
        raise


def _run_main(args: argparse.Namespace) -> int:
    if args.replay and getattr(args, "engine_url", None):  # a saved report keeps the server it recorded
        raise UsageError("--engine-url times a server running now; --replay judges a saved report (with the server it "
                         "recorded): give one of them")
    if not (args.list_checks or args.list_gpus):  # --model that names no model: exit 3 before anything is read or shown
        refuse_non_model(args)
    early_torch = start_torch_early(args)
    if args.list_checks:
        from checks.registry import all_checks  # lazy: the checks (63 modules) load only to list or run them, after the torch child started

        for c in all_checks():
            deps = f"  (needs {', '.join(c.depends_on)})" if c.depends_on else ""
            print(f"{c.id:<22} {c.title}{deps}")
        return ExitCode.OK
    if args.list_gpus:
        from doctor.knowledge.gpus import GPUS  # lazy: the GPU table (7 ms) only for --list-gpus, not --version
        from doctor.model.confidence import confidence_legend  # lazy: as the table

        for s in GPUS:
            print(f"{s.key:<18} {s.name:<26} cc {s.cc:<4} {s.memory_gb:>5g} GB  {s.bandwidth_gbs:>6g} GB/s  [{s.confidence}]")
        print(f"\n{confidence_legend()}")
        return ExitCode.OK
    if wants_tui(args):
        from doctor.cli.tui import run_tui  # lazy: the only road to textual: a terminal on both ends

        # wrong --check ids still exit 3 before any screen; the default list loads after the first frame
        checks = select_checks(args.only) if args.only else None
        if args.replay and args.gpu_index:  # --gpu N that the saved report lacks: exit 3 before any screen, as plain
            from doctor.facts.source import resolve  # lazy: a replay's facts are read here only to check --gpu
            from doctor.run.run import require_recorded_gpus  # lazy: as above

            resolved = resolve(source_from_args(args))
            require_recorded_gpus(plan_from_args(args, resolved.plan), resolved.facts)
        return run_tui(args, checks)

    # with --model, the timed probe after the checks (or a `probe` line saying why not); --check runs only those
    run = run_from_args(args, select_checks(args.only), torch_gatherer=early_torch,
                        probe=not args.no_probe and not args.only)
    outputs = ReportOutputs(args)
    run.execute(outputs)
    assert outputs.code is not None  # a run's last event is its report
    return outputs.code


def write_partial_report(exc: BaseException, args: argparse.Namespace, checks: tuple[Check, ...] | None) -> None:
    """On an interrupt while gathering: -o gets the report of what was read (the rest unknown, with why)."""
    from doctor.cli.interrupted import interrupted_report  # lazy: the interrupted report (gathering, the pipeline) loads only after a signal

    stop_all()
    if not args.output:
        return
    with interrupts_ignored():  # a second signal must not cut the write short
        report = interrupted_report(plan_from_args(args), getattr(exc, "signum", signal.SIGINT), checks,
                                    getattr(exc, "partial_facts", None))
        write_report_file(report, args.output, redact=not args.no_redact)


def _raise_interrupted(signum: int, _frame: FrameType | None) -> None:
    if _is_the_program:
        end_within(signum)  # the run unwinds from here; whatever it gets stuck on, it ends within the deadline
    raise Interrupted(signum)


_is_the_program = False  # main() without argv: the console script or `python -m doctor`, not a caller that goes on


def _exit_quietly_on_closed_stdout() -> int:
    """stdout's reader went away (`| head -1`, a closed pipe): end like other Unix tools, with no message."""
    _discard_stdout()
    return ExitCode.BROKEN_PIPE if os.name == "posix" else ExitCode.USAGE  # 128 + SIGPIPE, as the shell reports a piped tool


def _discard_stdout() -> None:
    """Point stdout at /dev/null, so Python's final flush of what is still buffered cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def main(argv: Sequence[str] | None = None) -> int:
    global _is_the_program
    in_process = argv is not None  # the console script and `python -m doctor` pass none
    _is_the_program = not in_process
    argv = list(sys.argv[1:] if argv is None else argv)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _raise_interrupted)
    try:
        start_guard_handed_back()  # inside the try: a Ctrl-C from here on is this function's 130
        prepare_streams()
        return _main(argv)
    except KeyboardInterrupt:  # before _main's own handler took over (start-up): 130, no traceback
        _stopping.update(_ignore_interrupts())
        return interrupt_exit(signal.SIGINT)
    finally:
        stop_all()  # whatever way the run ends, no child of the doctor outlives it
        if in_process:  # a caller that goes on (a test) gets its handlers back; the program ends with them ignored
            for signum, handler in _stopping.items():
                signal.signal(signum, handler)
            _stopping.clear()


_stopping: dict[int, Any] = {}  # the handlers in force before an interrupt was handled, while the run ends


def _ignore_interrupts() -> dict[int, Any]:
    """After the first interrupt: later ones are ignored while the run ends (its exit code is already decided;
    a second Ctrl-C would otherwise land in the clean-up as a traceback or a signal death)."""
    old: dict[int, Any] = {}
    for sig in INTERRUPTS:
        if sig not in _stopping and signal.getsignal(sig) is not None:
            old[sig] = signal.getsignal(sig)
            signal.signal(sig, signal.SIG_IGN)
    return old


def _output_failed(exc: Exception) -> TypeGuard[OSError]:
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EIO, errno.EBADF, errno.EDQUOT, errno.EFBIG)


def _main(argv: list[str]) -> int:
    try:
        if argv and argv[0] in SUBCOMMANDS:
            module = importlib.import_module(SUBCOMMANDS[argv[0]][0])
            sub = Parser(prog=f"v100-doctor {argv[0]}", description=module.__doc__,
                         formatter_class=argparse.RawDescriptionHelpFormatter, epilog=command_exit_help(argv[0]))
            module.add_arguments(sub)
            code = int(module.run(sub.parse_args(argv[1:])))
        else:
            code = int(run_main(build_parser().parse_args(argv)))
        flush_stdout()
        return code
    except OutputFailed as exc:  # stdout is a full disk or gone: an input/output error, not a bug
        _discard_stdout()
        print(f"v100-doctor: error: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    except InputError as exc:  # it may quote a file's content or name: shown, never obeyed by the terminal
        print(f"v100-doctor: error: {visible(str(exc))}", file=sys.stderr)
        return ExitCode.USAGE
    except BrokenPipeError:
        return _exit_quietly_on_closed_stdout()
    except KeyboardInterrupt as exc:
        _stopping.update(_ignore_interrupts())  # the exit code is decided: a second Ctrl-C cannot change it now
        stop_all()
        signum = getattr(exc, "signum", signal.SIGINT)
        try:
            print(f"v100-doctor: interrupted ({signal.Signals(signum).name})", file=sys.stderr)
        except OSError:  # a hang-up: the terminal is gone, the exit code still says what happened
            pass
        return interrupt_exit(signum)
    except Exception as exc:  # noqa: BLE001
        if _output_failed(exc):  # a full disk or a stream that went away: an input/output error (3)
            _discard_stdout()
            print(f"v100-doctor: error: cannot write the output: {exc.strerror}", file=sys.stderr)
            return ExitCode.USAGE
        if os.environ.get("V100_DOCTOR_DEBUG"):
            raise
        print(f"v100-doctor: internal error: {type(exc).__name__}: {exc} (a bug; rerun with V100_DOCTOR_DEBUG=1 "
              "for the traceback and please report it)", file=sys.stderr)
        return ExitCode.INTERNAL
