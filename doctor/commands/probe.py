"""Run the timed probe of the engine in force alone: measured decode tok/s against this card's ceiling, and why.

The engine is the one the checks judge (--engine, the launch config, the model's format, what is installed):
ExLlamaV2, llama.cpp (llama-cpp-python or llama-bench; a .gguf), or Transformers (+ bitsandbytes), each in a child
process (a crash, an out-of-memory or ExLlamaV2's first-time JIT build of 2-3 minutes cannot take the doctor down;
Ctrl-C stops it and leaves nothing running). It loads the model with your settings, warms up, then times runs of 128
decode tokens with EOS disabled (more runs while they disagree) while NVML samples the card. The verdict names what
explains the gap to the ceiling. --synthetic writes a random-weight model in the engine's own format. An engine in
its own server (Ollama, llama-server, vLLM, TabbyAPI, LM Studio) is timed through its API: --engine-url URL.

examples:
  v100-doctor probe --synthetic                       what ExLlamaV2 reaches on this card, no download
  v100-doctor probe --model /models/qwen-27b-exl2 --max-seq-len 8192 --cache-mode q8
  v100-doctor probe --synthetic --synthetic-format gptq-act-order --json -o probe.json
  v100-doctor probe --model /models/qwen-27b-Q4_K_M.gguf                 llama.cpp on your GGUF
  v100-doctor probe --engine llama.cpp --synthetic                        llama.cpp on a synthetic 27B-shape GGUF
  v100-doctor probe --engine transformers --synthetic --compare-engines   bitsandbytes NF4 against llama.cpp/ExLlamaV2
  v100-doctor probe --streams 1,2,4,8 --engine-url http://127.0.0.1:8080  a running server under 1-8 users at once
  v100-doctor probe --streams 1,2,4 --model /models/qwen-27b-exl2 --max-seq-len 4096 --cache-mode q4
                                                  ExLlamaV2's dynamic generator on your model, 1-4 jobs at once
  v100-doctor probe --streams 1,2,4 --model /models/qwen-27b-Q4_K_M.gguf your llama-server, started with --parallel 4
  v100-doctor probe --engine-url http://127.0.0.1:11434                  the model Ollama has loaded, timed
"""

from __future__ import annotations

import argparse
from typing import Any

from checks.env.gpu_present import CHECK as GPU_PRESENT
from doctor.cli.model_first import refuse_non_model
from doctor.cli.options import (
    add_engine_url_argument,
    add_output_arguments,
    add_plan_arguments,
    path_arg,
    plan_from_args,
    positive_int,
    synthetic_gb,
)
from doctor.cli.output import ReportOutputs
from doctor.commands import probe_transformers
from doctor.facts.modeldir.directory import gather_model
from doctor.model.errors import UsageError
from doctor.model.exitcodes import ExitCode
from doctor.model.ids import Engine
from doctor.model.plan import Plan
from doctor.model.source import ThisMachine
from doctor.probe.runner import SyntheticRequest
from doctor.probe.served.identify import is_local
from doctor.probe.synthetic import FORMATS
from doctor.run.probe_stage import probe_checks
from doctor.run.run import ProbeRequest, Run

FORMAT_HELP = ("random-weight model format: gptq (default: 4-bit with 27B-like layers, ExLlamaV2's quantized kernels and "
               "CUDA graphs, like the models people run), gptq-sequential, gptq-act-order, fp16 (plain torch matmuls)")


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_output_arguments(p)
    add_plan_arguments(p)
    add_engine_url_argument(p)
    g = p.add_argument_group("probe")
    g.add_argument("--synthetic", action="store_true", help="build a random-weight model sized for this card and probe it")
    g.add_argument("--synthetic-format", default="gptq", metavar="FORMAT", help=FORMAT_HELP)
    g.add_argument("--synthetic-gb", type=synthetic_gb, metavar="GB", help="size of the synthetic model's weights (default: sized for the card, at most 6)")
    g.add_argument("--keep-synthetic", metavar="DIR", type=path_arg, help="write the synthetic model to DIR and keep it (default: a temp dir, removed)")
    g.add_argument("--tokens", type=positive_int, default=128, metavar="N", help="decode tokens per timed run (default 128)")
    g.add_argument("--runs", type=positive_int, default=3, metavar="N",
                   help="timed runs that must agree within --settle-pct (default 3); more are run until they do (with "
                        "--streams: repeats of each round, their totals' medians reported)")
    g.add_argument("--settle-pct", type=float, default=3.0, metavar="PCT", help="spread that counts as settled (default 3)")
    g.add_argument("--settle-budget", type=float, default=45.0, metavar="S",
                   help="seconds of extra runs to wait for the spread to settle (default 45); then the spread and its cause are reported")
    g.add_argument("--warmup", type=positive_int, default=256, metavar="N", help="warm-up decode tokens before timing (default 256)")
    g.add_argument("--prompt", type=positive_int, default=128, metavar="N", dest="prompt_tokens", help="prompt tokens (default 128)")
    g.add_argument("--second-pass", choices=("auto", "always", "never"), default="auto",
                   help="reload the model and time it again: auto = when the first load looks host-bound (default)")
    g.add_argument("--no-bandwidth", action="store_true", help="skip the device-to-device bandwidth measurement")
    g.add_argument("--synthetic-layers", type=positive_int, metavar="N",
                   help="with --engine llama.cpp or transformers --synthetic: decoder layers of the 27B-shape model "
                        "(Transformers: 8; llama.cpp: as many as --synthetic-gb, or the card, allows)")
    g.add_argument("--compare-engines", action="store_true",
                   help="also measure the same shape in the other installed engines (Transformers, llama.cpp, ExLlamaV2), "
                        "each in its own format; the verdict's engine gap then says 'measured'")
    g.add_argument("--streams", type=stream_counts, metavar="N,N,...",
                   help="concurrent streams to time (e.g. 1,2,4,8): total and per-stream tok/s and time to first "
                        "token at each; batched or queued. Against the running server at --engine-url, or with "
                        "--model/--synthetic in ExLlamaV2's dynamic generator, N jobs at once (paged with flash-attn "
                        "on sm_80+, else one at a time), or with --model FILE.gguf in your llama-server, started with "
                        "--parallel N and stopped after")
    g.add_argument("--no-sampling", action="store_true",
                   help="do not sample NVML during the timed runs (the verdict then cannot judge utilisation or clocks)")


def stream_counts(text: str) -> tuple[int, ...]:
    """'1,2,4' -> (1, 2, 4): each a whole number 1-64, in the order given, no repeats."""
    try:
        counts = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        counts = ()
    if not counts or any(not 1 <= n <= 64 for n in counts) or len(set(counts)) != len(counts):
        raise argparse.ArgumentTypeError(f"{text!r}: give stream counts from 1 to 64, comma-separated, e.g. 1,2,4,8")
    return counts


def run_streams(args: argparse.Namespace) -> int:
    """--streams: against the server at --engine-url (the checks that need no model, then its rounds), or in the
    engine in force, which the doctor starts itself on --model or --synthetic (`probe`'s checks, then its rounds),
    in the one Run."""
    if args.engine_url and (args.synthetic or args.model):
        raise UsageError("--streams --engine-url times the server's own model: leave out --model and --synthetic, "
                         "or leave out --engine-url to drive the engine in force on --model PATH yourself")
    if not args.engine_url:
        return run_driven_streams(args)
    plan = plan_from_args(args)
    here = is_local(args.engine_url)  # a server on another host: its card is not this one's, so no GPU check here
    run = Run(ThisMachine(), plan_overrides=lambda _base: plan, checks=(GPU_PRESENT,) if here else (),
              probe=ProbeRequest(asked=True, sampling=False, streams=args.streams, engine_url=args.engine_url,
                                 stream_tokens=args.tokens, settings=repeats(args)))
    outputs = ReportOutputs(args)
    run.execute(outputs)
    return outputs.code if outputs.code is not None else ExitCode.INTERNAL


def run_driven_streams(args: argparse.Namespace) -> int:
    """--streams with --model or --synthetic: ExLlamaV2's dynamic generator with N jobs at once, in the probe's
    child (doctor/probe/exl2_streams.py), or the user's llama-server started with --parallel N on a GGUF."""
    if args.synthetic == bool(args.model):
        raise UsageError("--streams needs what to drive: --model PATH (or --synthetic) for the engine in force, or "
                         "--engine-url URL for a running server (llama-server --parallel N, Ollama with "
                         "OLLAMA_NUM_PARALLEL=N, vLLM, TabbyAPI)")
    if args.synthetic and args.synthetic_format not in FORMATS:
        raise UsageError(f"--synthetic-format must be one of {', '.join(FORMATS)}")
    plan = model_plan(args)
    synthetic = SyntheticRequest(format=args.synthetic_format, target_gb=args.synthetic_gb,
                                 keep_dir=args.keep_synthetic) if args.synthetic else None
    settings = (("prompt_tokens", args.prompt_tokens), ("warmup_tokens", args.warmup), ("tokens", args.tokens),
                *repeats(args))
    run = Run(ThisMachine(), plan_overrides=lambda _base: plan, checks=probe_checks,
              probe=ProbeRequest(asked=True, synthetic=synthetic, sampling=False, settings=settings,
                                 streams=args.streams, stream_tokens=args.tokens))
    outputs = ReportOutputs(args)
    run.execute(outputs)
    return outputs.code if outputs.code is not None else ExitCode.INTERNAL


def repeats(args: argparse.Namespace) -> tuple[tuple[str, Any], ...]:
    """--streams: each round repeated until its totals settle, by the timing probe's flags (--runs, --settle-pct,
    --settle-budget)."""
    return (("runs", args.runs), ("settle_pct", args.settle_pct), ("settle_budget_s", args.settle_budget))


def model_plan(args: argparse.Namespace) -> Plan:
    """The plan from the flags; a --model that names no model is one line and exit 3, first, as in the main command."""
    plan = plan_from_args(args)
    refuse_non_model(args, plan)
    if plan.model_path:  # a path that names nothing is the user's mistake (3), as in the main command
        model = gather_model(plan.model_path)
        if model.kind in ("missing", "unreadable"):
            raise UsageError(f"--model {plan.model_path!r}: {model.problem or 'cannot be read'}")
    return plan


def run(args: argparse.Namespace) -> int:
    if args.streams:
        return run_streams(args)
    if args.engine_url and args.synthetic:
        raise UsageError("--engine-url times the server's own model; --synthetic writes one for an engine the doctor "
                         "starts itself: give one of them")
    if args.synthetic == bool(args.model) and not args.engine_url:
        raise UsageError("give either --model PATH, --synthetic, or --engine-url URL (a running server)")
    if args.synthetic_format not in FORMATS:
        raise UsageError(f"--synthetic-format must be one of {', '.join(FORMATS)}")
    plan = model_plan(args)
    gguf = (plan.model_path or "").lower().endswith(".gguf")
    if args.compare_engines and args.synthetic and plan.engine in (None, Engine.EXLLAMAV2, Engine.TABBYAPI) and not gguf:
        return probe_transformers.run_compare(args, plan)  # ExLlamaV2's side of the gap (its own JSON, for now)
    if args.compare_engines and plan.model_path and plan.engine != Engine.TRANSFORMERS:
        raise UsageError("--compare-engines with this engine needs --synthetic: every engine is measured on the "
                         "doctor's synthetic model of the same shape (with --engine transformers, on your model's)")
    synthetic = SyntheticRequest(format=args.synthetic_format, target_gb=args.synthetic_gb,
                                 keep_dir=args.keep_synthetic) if args.synthetic else None
    settings = (("prompt_tokens", args.prompt_tokens), ("warmup_tokens", args.warmup), ("runs", args.runs),
                ("tokens", args.tokens), ("settle_pct", args.settle_pct), ("settle_budget_s", args.settle_budget),
                ("second_pass", args.second_pass), ("measure_bandwidth", not args.no_bandwidth))
    engine_options = (("synthetic_gb", args.synthetic_gb), ("synthetic_layers", args.synthetic_layers),
                      ("keep_dir", args.keep_synthetic), ("compare", args.compare_engines))
    # the probe alone: only the checks that decide whether the engine in force can run, then its probe, in the one Run
    run = Run(ThisMachine(), plan_overrides=lambda _base: plan, checks=probe_checks,
              probe=ProbeRequest(asked=True, synthetic=synthetic, sampling=not args.no_sampling, settings=settings,
                                 engine_options=engine_options))
    outputs = ReportOutputs(args)  # progress on stderr, the report where asked; 130/143/129 when cancelled
    run.execute(outputs)
    return outputs.code if outputs.code is not None else ExitCode.INTERNAL  # ReportReady always comes last
