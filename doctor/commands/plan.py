"""Plan before the download: every quantized version of a model, with each cache type, on the cards you name:
does it fit, how fast should it run, and the commands to get and run it.

MODEL is a Hugging Face id (a base model, or a quantized repo; @revision allowed), a local model folder, a
config.json or a .gguf file (its header: shape and version). For a base model the Hub lists the repos quantized from it (EXL2 branches, GGUF files, GPTQ/AWQ);
offline (HF_HUB_OFFLINE=1) the Hugging Face cache is searched instead. Only config.json is read; no weights are
downloaded. With no quantized version found, the standard ones you can convert yourself are planned.

The answer comes first: the fastest option that fits --context (within 5% of the fastest, the better quality
one), and the longest context that still runs at --min-tok-s; then the whole table. Speeds are estimates: the
bytes read per token at the card's bandwidth over the engine's efficiency on that architecture (llama.cpp: its
products' share of the bandwidth plus fixed costs per layer and per token), each with its source and range.
Nothing is downloaded or run: the commands are printed.

examples:
  v100-doctor plan Qwen/Qwen2.5-32B-Instruct                      a V100 16 GB at 8192 tokens (the defaults)
  v100-doctor plan ORG/MODEL --target-gpu p40 --target-gpu t4      each card, then the two split
  v100-doctor plan ./config.json --context 16384 --min-tok-s 30
  v100-doctor plan ORG/MODEL --draft ORG/SMALL-MODEL --json        a draft model in the budget; JSON (v100-doctor/plan/1)
  v100-doctor plan ORG/MODEL --users 8 --min-tok-s 15              the best option for eight people at once

exit codes: below (and docs/reference/exit-codes.md).
"""

from __future__ import annotations

import argparse
import sys

from doctor.cli.options import bounded_int, finite_float, path_arg, target_gpu
from doctor.commands.cards import DEFAULT_HELP, CardsDetection
from doctor.commands.table_output import hand_over
from doctor.facts.hub.quants import discover
from doctor.knowledge.arithmetic.model_bytes import ArithmeticUnavailable
from doctor.knowledge.gpus import spec_for_key
from doctor.model.errors import UsageError
from doctor.model.exitcodes import ExitCode
from doctor.model.quant_plan import QuantPlan, plan_to_json
from doctor.plan.build import DEFAULT_MIN_BPW, build_plan
from doctor.plan.draft import draft_bytes, draft_weights
from doctor.plan.rows import planned_engines
from doctor.render.plan_markdown import render_plan_markdown
from doctor.render.plan_text import render_plan_text

DEFAULT_CONTEXT = 8192


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", metavar="MODEL", type=path_arg,
                   help="Hugging Face id org/name[@revision], a model folder, a config.json or a .gguf file")
    p.add_argument("--target-gpu", metavar="CARD", type=target_gpu, action="append", dest="cards",
                   help=f"a card from --list-gpus (repeatable: each card, then all of them split; {DEFAULT_HELP})")
    p.add_argument("--context", type=bounded_int(256, 1 << 20, "a context length"), default=DEFAULT_CONTEXT,
                   metavar="N", help=f"the context length you need (default {DEFAULT_CONTEXT})")
    p.add_argument("--engine", choices=tuple(str(e.id) for e in planned_engines()),
                   help="only this engine's options (default: every engine that runs the versions found)")
    p.add_argument("--min-tok-s", type=finite_float(0.1, 100000, "a speed", " tok/s"), metavar="X",
                   help="the speed you need: the answer names the longest context that keeps it")
    p.add_argument("--min-bpw", type=finite_float(1.0, 16.0, "bits per weight"), default=DEFAULT_MIN_BPW, metavar="B",
                   help=f"quality floor for the answer (default {DEFAULT_MIN_BPW:g}); the table shows every version")
    p.add_argument("--draft", metavar="MODEL", type=path_arg,
                   help="a speculative-decoding draft model (Hub id, folder or config.json): in the budget, and the "
                        "speed it may give (an estimate)")
    p.add_argument("--users", type=bounded_int(1, 64, "a number of users"), metavar="N",
                   help="N people at once: the option that gives each the highest speed (above --min-tok-s), from "
                        "batched decode's estimate")
    o = p.add_argument_group("output")
    fmt = o.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="the plan as JSON only (schema v100-doctor/plan/1)")
    fmt.add_argument("--markdown", action="store_true", help="the plan as Markdown")
    o.add_argument("-o", "--output", metavar="FILE", type=path_arg, help="also write the JSON plan to FILE")
    o.add_argument("-v", "--verbose", action="store_true", help="every row's commands, not only the answers'")
    o.add_argument("--no-tui", action="store_true", help="plain text even on a terminal (the screen: s sorts, Enter "
                                                          "shows a row's commands)")


def make_plan(args: argparse.Namespace) -> QuantPlan:
    detecting = None if args.cards else CardsDetection()  # NVML's child starts now, beside the model's lookup
    found = discover(args.model)
    print(f"v100-doctor: {found.model}: {found.how}", file=sys.stderr)
    if detecting is None:
        cards = tuple(spec for key in args.cards if (spec := spec_for_key(key)) is not None)
    else:
        cards, where = detecting.result()
        print(f"v100-doctor: planning for {', '.join(c.key for c in cards)} ({where})", file=sys.stderr)
    extra, name, weights = 0, None, (0, 0)
    if args.draft:
        draft = discover(args.draft)
        name = draft.model
        own = draft.candidates[0] if draft.candidates and draft.candidates[0].found in ("local", "config", "hub") else None
        try:
            extra = draft_bytes(draft.config, own, args.context)
            weights = draft_weights(draft.config, own)
        except ArithmeticUnavailable as exc:
            raise UsageError(f"--draft {args.draft}: {exc}") from None
    try:
        return build_plan(found.model, found.how, found.config, found.candidates, cards, args.context, args.min_tok_s,
                          args.min_bpw, args.engine, extra, name, found.base_repo, found.notes,
                          draft_weights=weights, users=args.users)
    except ArithmeticUnavailable as exc:
        raise UsageError(f"{args.model}: {exc}") from None


def _screen(plan: QuantPlan) -> None:
    from doctor.tui.plan_screen import PlanApp  # lazy: textual loads only when the plan opens on a terminal

    PlanApp(plan).run()


def run(args: argparse.Namespace) -> ExitCode:
    plan = make_plan(args)
    hand_over(args, "the plan", plan, plan_to_json, render_plan_markdown, render_plan_text, _screen)
    fastest = [a for a in plan.answers if a.question.startswith("fastest")]
    return ExitCode.OK if all(a.row is not None for a in fastest) else ExitCode.WARNINGS
