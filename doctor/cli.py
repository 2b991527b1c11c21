"""The command line. Headless: imports neither textual nor torch at start-up.

stdout carries only the chosen output (text, Markdown or JSON); diagnostics go to stderr.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Sequence

from doctor import __version__
from doctor.model.exitcodes import EXIT_CODE_HELP, ExitCode
from doctor.model.findings import Status

# subcommand -> module with add_arguments(parser) and run(args) -> ExitCode
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "explain": ("doctor.commands.explain", "name the pitfall behind each error in a pasted log, confirmed on this machine"),
    "bundle": ("doctor.commands.bundle", "write one redacted .tar.gz/.zip with everything a support ticket needs"),
    "watch": ("doctor.commands.watch", "sample a running server: throttling, offload, competing processes (read-only)"),
    "probe": ("doctor.commands.probe", "time ExLlamaV2 on your model (or --synthetic) and explain the gap to the ceiling"),
    "demo": ("doctor.commands.demo", "replay recorded example cases (the reference V100 journey, an H200), clearly labelled"),
}

DESCRIPTION = """\
Diagnose a quantized-LLM setup on an old data-centre GPU (V100 first; P100, P40, T4,
TITAN V, RTX 2080 Ti too). Ordered checks of the GPU, driver, CUDA/PyTorch pairing and
flash-attn; with --model, the model's format, kernel path, memory budget and decode
ceiling; runtime health (throttling, offload, other processes); then a timed ExLlamaV2
probe and a verdict that names what explains the gap to the ceiling. Every finding has
the numbers behind it and the exact fix. It never changes anything: it prints commands.
"""

EXAMPLES = """\
examples:
  v100-doctor                          diagnose this machine
  v100-doctor --json -o report.json    a report for a support ticket (stdout: JSON only)
  v100-doctor --markdown               paste into a GitHub issue
  v100-doctor --replay report.json     re-run today's checks on a saved report's facts
  v100-doctor --list-checks            what is checked, in order
  v100-doctor --check cuda-pairing -v  one check, with its evidence
  v100-doctor --model /data/qwen27b-exl2 --max-seq-len 8192 --cache-mode q8
                                       does it fit, how fast can it go, how fast does it go
  v100-doctor --target-gpu v100-pcie-16gb --model DIR --no-probe
                                       plan a V100 deployment from a laptop
  v100-doctor demo                     the recorded examples (no GPU needed)
"""


class UsageError(Exception):
    """The user's command line is wrong: one line to stderr, exit 3."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse would exit 2, which means "a check failed" here
        raise UsageError(f"{message} (see: {self.prog} --help)")


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {value}")
    return value


def target_gpu(text: str) -> str:
    """A --target-gpu key from the knowledge base (an NVML-style name is accepted too)."""
    import difflib

    from checks.knowledge.gpus import GPUS, spec_for_key, spec_for_name

    spec = spec_for_key(text) or spec_for_name(text)
    if spec is None:
        close = [g.key for g in GPUS if text.lower() in g.key] or difflib.get_close_matches(text.lower(), [g.key for g in GPUS], n=2)
        hint = f"; did you mean {' or '.join(close[:4])}?" if close else ""
        raise argparse.ArgumentTypeError(f"unknown GPU {text!r}{hint} (v100-doctor --list-gpus shows the known ones)")
    return spec.key


def gpu_split(text: str) -> tuple[float, ...]:
    try:
        parts = tuple(float(p) for p in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected GB per GPU like 16 or 10,14; got {text!r}") from None
    if any(p <= 0 for p in parts):
        raise argparse.ArgumentTypeError("each GPU's share must be positive")
    return parts


def add_plan_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("deployment plan (what you intend to run)")
    g.add_argument("--model", metavar="PATH", nargs="+", help="model directory (EXL2, GPTQ, AWQ, FP16/BF16, GGUF); quote paths with spaces")
    g.add_argument("--max-seq-len", type=positive_int, metavar="N", help="context length you will load with (ExLlamaV2 max_seq_len)")
    g.add_argument("--cache-mode", choices=["fp16", "fp8", "q8", "q6", "q4"], default=None, help="KV cache mode (default fp16)")
    g.add_argument("--gpu-split", type=gpu_split, metavar="GB[,GB...]", help="ExLlamaV2 gpu_split in GB per GPU")
    g.add_argument("--gpu", type=int, default=0, metavar="INDEX", dest="gpu_index", help="which GPU to diagnose (default 0)")
    g.add_argument("--target-gpu", metavar="NAME", type=target_gpu, help="plan for a card you do not have (e.g. v100-pcie-16gb); see --list-gpus")


def add_output_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("output")
    fmt = g.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print the JSON report only (schema v100-doctor/report/1)")
    fmt.add_argument("--markdown", action="store_true", help="print Markdown for a GitHub issue")
    g.add_argument("-o", "--output", metavar="FILE", help="also write the JSON report to FILE (written even when the run is cut short)")
    g.add_argument("-v", "--verbose", action="store_true", help="show every check's evidence")
    g.add_argument("--no-tui", action="store_true", help="plain text even on a terminal")


def build_parser() -> Parser:
    p = Parser(prog="v100-doctor", description=DESCRIPTION, epilog=EXAMPLES + "\n" + EXIT_CODE_HELP + _subcommand_help(),
               formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"v100-doctor {__version__}")
    add_output_arguments(p)
    add_plan_arguments(p)
    g = p.add_argument_group("what to run")
    g.add_argument("--replay", metavar="FILE", help="re-run today's checks on the facts saved in a report or fixture")
    g.add_argument("--list-checks", action="store_true", help="list the checks in the order they run, then exit")
    g.add_argument("--list-gpus", action="store_true", help="list the GPUs the knowledge base knows (for --target-gpu), then exit")
    g.add_argument("--check", action="append", metavar="ID", dest="only", help="run only this check (repeatable)")
    g.add_argument("--no-probe", action="store_true", help="skip the timed ExLlamaV2 generation")
    g.add_argument("--fresh", action="store_true", help="import torch again instead of using its cached static facts")
    g.add_argument("--no-cache", action="store_true",
                   help="neither read nor write ~/.cache/v100-doctor (the only file the doctor ever writes unasked)")
    g.add_argument("--torch-timeout", type=float, default=20.0, metavar="S", help="give up on torch's import/CUDA init after S seconds (default 20)")
    return p


def _subcommand_help() -> str:
    if not SUBCOMMANDS:
        return ""
    rows = "\n".join(f"  {name:<10} {blurb}" for name, (_, blurb) in SUBCOMMANDS.items())
    return f"\n\nsubcommands (v100-doctor SUBCOMMAND --help):\n{rows}"


def plan_from_args(args: argparse.Namespace, base=None):
    from dataclasses import replace

    from doctor.model.plan import Plan

    plan = base or Plan()
    changes = {}
    if getattr(args, "model", None):
        changes["model_path"] = " ".join(args.model)
        changes["model_path_parts"] = tuple(args.model)
    for name in ("max_seq_len", "cache_mode", "gpu_split", "target_gpu"):
        if getattr(args, name, None) is not None:
            changes[name] = getattr(args, name)
    if getattr(args, "gpu_index", 0):
        changes["gpu_index"] = args.gpu_index
    return replace(plan, **changes)


def exit_code_for(report) -> ExitCode:
    statuses = {f.status for f in report.findings}
    if any(f.evidence.get("input_error") for f in report.findings):  # e.g. --model names nothing
        return ExitCode.USAGE
    if Status.FAIL in statuses:
        return ExitCode.FAILURES
    if Status.ERROR in statuses or report.errors:
        return ExitCode.INTERNAL
    if Status.WARN in statuses:
        return ExitCode.WARNINGS
    return ExitCode.OK


def emit(report, args) -> ExitCode:
    """Write the report where asked, print it in the chosen format, return the exit code."""
    from doctor.model.report import report_to_json

    if getattr(args, "output", None):
        write_report_file(report, args.output)
    if args.json:
        sys.stdout.write(report_to_json(report) + "\n")
    elif args.markdown:
        from doctor.render.markdown import render_markdown

        sys.stdout.write(render_markdown(report))
    else:
        from doctor.render.text import render_text

        sys.stdout.write(render_text(report, verbose=args.verbose))
    for f in report.findings:
        if f.evidence.get("input_error"):
            print(f"v100-doctor: error: {f.evidence['input_error']}", file=sys.stderr)
    return exit_code_for(report)


def write_report_file(report, path: str) -> None:
    from doctor.model.report import report_to_json

    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(report_to_json(report) + "\n")
    except OSError as exc:
        raise UsageError(f"cannot write the report to {path}: {exc.strerror}") from None
    print(f"v100-doctor: report written to {path}", file=sys.stderr)


def select_checks(only: list[str] | None):
    from checks.registry import all_checks, check_ids

    if not only:
        return None  # the pipeline picks the checks that apply to the plan (model checks only with --model)
    unknown = [c for c in only if c not in check_ids()]
    if unknown:
        raise UsageError(f"unknown check id {', '.join(unknown)}; known: {', '.join(check_ids())}")
    return tuple(c for c in all_checks() if c.id in only)


def wants_tui(args: argparse.Namespace) -> bool:
    """The TUI on an interactive terminal; plain output for pipes, files, --json, --markdown or --no-tui."""
    if args.json or args.markdown or args.no_tui or os.environ.get("TERM") == "dumb":
        return False
    return sys.stdout.isatty() and sys.stdin.isatty()


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
                return 130
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
    except UsageError as exc:
        print(f"v100-doctor: error: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    except KeyboardInterrupt:
        print("v100-doctor: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001
        from doctor.model.report import ReplayError

        if isinstance(exc, ReplayError):
            print(f"v100-doctor: error: {exc}", file=sys.stderr)
            return ExitCode.USAGE
        if os.environ.get("V100_DOCTOR_DEBUG"):
            raise
        print(f"v100-doctor: internal error: {type(exc).__name__}: {exc} (a bug; rerun with V100_DOCTOR_DEBUG=1 "
              "for the traceback and please report it)", file=sys.stderr)
        return ExitCode.INTERNAL
