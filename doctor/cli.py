"""The command line. Headless: imports neither textual nor torch at start-up.

stdout carries only the chosen output (text, Markdown or JSON); diagnostics go to stderr.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Sequence

from doctor.model.exitcodes import EXIT_CODE_HELP, ExitCode
from doctor.model.errors import InputError
from doctor.run.options import SUBCOMMANDS, Parser, build_parser, plan_from_args, select_checks, wants_tui
from doctor.run.output import emit


def start_torch_early(args: argparse.Namespace):
    """Start the torch child before importing the checks: its ~1.5 s import then overlaps everything else."""
    if args.replay or args.list_checks or args.list_gpus or wants_tui(args):
        return None  # the TUI gathers in its own worker
    from doctor.facts.torch_facts import TorchGatherer

    return TorchGatherer(timeout_s=args.torch_timeout, fresh=args.fresh, use_cache=not args.no_cache)


def run_main(args: argparse.Namespace) -> ExitCode:
    early_torch = start_torch_early(args)
    if args.list_checks:
        from checks.registry import all_checks

        for c in all_checks():
            deps = f"  (needs {', '.join(c.depends_on)})" if c.depends_on else ""
            print(f"{c.id:<22} {c.title}{deps}")
        return ExitCode.OK
    if args.list_gpus:
        from checks.knowledge.gpus import GPUS

        for s in GPUS:
            print(f"{s.key:<18} {s.name:<26} cc {s.cc:<4} {s.memory_gb:>5g} GB  {s.bandwidth_gbs:>6g} GB/s  [{s.confidence}]")
        return ExitCode.OK
    if wants_tui(args):
        from doctor.tui.launch import run_tui  # the only road to textual: a terminal on both ends

        # wrong --check ids still exit 3 before any screen; the default list loads after the first frame
        return run_tui(args, select_checks(args.only) if args.only else None)
    from doctor.run.pipeline import GatherOptions, diagnose

    checks = select_checks(args.only)
    if args.replay:
        from doctor.facts.replay import load_document

        loaded = load_document(args.replay)
        report = diagnose(plan_from_args(args, loaded.plan), loaded.facts, source=f"replay:{args.replay}",
                          note=loaded.note, checks=checks)
    else:
        report = diagnose(plan_from_args(args), checks=checks,
                          options=GatherOptions(torch_timeout_s=args.torch_timeout, fresh=args.fresh,
                                                use_cache=not args.no_cache,
                                                torch_gatherer=early_torch))
        if report.plan.model_path and not args.no_probe and not args.only:  # then the timed probe, or why not
            from doctor.probe.console import ConsoleProgress
            from doctor.run.probe_stage import after_checks

            report = after_checks(report, on_event=ConsoleProgress())
            if report.probe is not None and report.probe.status == "cancelled":
                emit(report, args)
                return ExitCode.INTERRUPTED
    return emit(report, args)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] in SUBCOMMANDS:
            module = importlib.import_module(SUBCOMMANDS[argv[0]][0])
            sub = Parser(prog=f"v100-doctor {argv[0]}", description=module.__doc__,
                         formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EXIT_CODE_HELP)
            module.add_arguments(sub)
            return int(module.run(sub.parse_args(argv[1:])))
        args = build_parser().parse_args(argv)
        return int(run_main(args))
    except InputError as exc:
        print(f"v100-doctor: error: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    except KeyboardInterrupt:
        print("v100-doctor: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except Exception as exc:  # noqa: BLE001
        if os.environ.get("V100_DOCTOR_DEBUG"):
            raise
        print(f"v100-doctor: internal error: {type(exc).__name__}: {exc} (a bug; rerun with V100_DOCTOR_DEBUG=1 "
              "for the traceback and please report it)", file=sys.stderr)
        return ExitCode.INTERNAL
