"""Which catalogued model to run on this card: every model of the embedded catalogue x its quantized versions x
engine x cache type, on the detected card(s) or --target-gpu, at --context, ranked. Offline: nothing is downloaded,
the Hub is not asked.

The score, stated: a quality floor first (an option counts only if it fits the context whole on the card(s), the
model trained for that context, at or above --min-bpw bits per weight, and --min-tok-s when given), then speed: each model's best option, by plan's own rule
(the fastest; within 5% of it the higher bpw, then the less quantized cache), ranked by its expected tok/s with half
the context in the cache. Without --min-params the small models lead: narrow it by size, family, licence and use.
Each row is the row `v100-doctor plan MODEL` prints for that option, with the same columns and commands.

examples:
  v100-doctor fit                                      the card(s) in this machine at 8192 tokens
  v100-doctor fit --target-gpu v100-pcie-16gb --min-params 7 --use chat
  v100-doctor fit --target-gpu p40 --context 32768 --use code --licence apache-2.0 --licence mit
  v100-doctor fit --use moe --json                     JSON (schema v100-doctor/fit/1)

exit codes: below (and docs/reference/exit-codes.md).
"""

from __future__ import annotations

import argparse

from doctor.cli.options import bounded_int, finite_float, path_arg, target_gpu
from doctor.commands.cards import DEFAULT_CARD, detected_cards
from doctor.commands.table_output import hand_over
from doctor.knowledge.gpus import spec_for_key
from doctor.model.errors import UsageError
from doctor.model.exitcodes import ExitCode
from doctor.model.fit import USES, FitResult, fit_to_json
from doctor.plan.best import CatalogueReader, Filters, best_fit
from doctor.plan.build import DEFAULT_MIN_BPW, card_sets
from doctor.plan.rows import planned_engines
from doctor.render.fit_text import render_fit_markdown, render_fit_text

DEFAULT_CONTEXT = 8192
DEFAULT_LIMIT = 10


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--target-gpu", metavar="CARD", type=target_gpu, action="append", dest="cards",
                   help="a card from --list-gpus (repeatable: each card, then all of them split; default: the cards "
                        f"NVML finds here, else {DEFAULT_CARD})")
    p.add_argument("--context", type=bounded_int(256, 1 << 20, "a context length"), default=DEFAULT_CONTEXT,
                   metavar="N", help=f"the context length you need (default {DEFAULT_CONTEXT})")
    p.add_argument("--min-bpw", type=finite_float(1.0, 16.0, "bits per weight"), default=DEFAULT_MIN_BPW, metavar="B",
                   help=f"the quality floor: versions below it are not ranked (default {DEFAULT_MIN_BPW:g})")
    p.add_argument("--min-tok-s", type=finite_float(0.1, 100000, "a speed", " tok/s"), metavar="X",
                   help="the speed floor: options expected slower are not ranked")
    f = p.add_argument_group("filters")
    f.add_argument("--min-params", type=finite_float(0.0, 100000, "billions of parameters"), metavar="B",
                   help="at least B billion parameters (total; a MoE's active ones are shown beside)")
    f.add_argument("--max-params", type=finite_float(0.0, 100000, "billions of parameters"), metavar="B",
                   help="at most B billion parameters")
    f.add_argument("--family", action="append", default=[], metavar="NAME",
                   help="in the family or the Hub id, any case (repeatable: any of them): qwen, llama, gemma ...")
    f.add_argument("--licence", "--license", action="append", default=[], metavar="TAG", dest="licences",
                   help="the Hub licence tag (repeatable: any of them): apache-2.0, mit, llama3.1, gemma, unknown")
    f.add_argument("--use", action="append", default=[], choices=USES, dest="uses",
                   help="chat (instruction-tuned), code, moe or dense (repeatable: all of them)")
    f.add_argument("--engine", choices=tuple(str(e.id) for e in planned_engines()), help="only this engine's options")
    o = p.add_argument_group("output")
    fmt = o.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="JSON only (schema v100-doctor/fit/1)")
    fmt.add_argument("--markdown", action="store_true", help="Markdown")
    o.add_argument("--limit", type=bounded_int(0, 100000, "a number of models"), default=DEFAULT_LIMIT, metavar="N",
                   help=f"models ranked per card set (default {DEFAULT_LIMIT}; 0: every model that fits)")
    o.add_argument("-o", "--output", metavar="FILE", type=path_arg, help="also write the JSON to FILE")
    o.add_argument("-v", "--verbose", action="store_true", help="every row's commands, not only the first's")
    o.add_argument("--no-tui", action="store_true", help="plain text even on a terminal (the screen: Enter shows a "
                                                          "row's commands)")


def make_fit(args: argparse.Namespace) -> FitResult:
    from doctor.facts.catalogue import candidates, catalogue, model_config  # lazy: the catalogue's file
    from doctor.facts.catalogue.licences import licence_of, licence_source  # lazy: as the catalogue

    if args.min_params is not None and args.max_params is not None and args.min_params > args.max_params:
        raise UsageError(f"--min-params {args.min_params:g} is above --max-params {args.max_params:g}")
    if args.cards:
        cards = tuple(spec for key in args.cards if (spec := spec_for_key(key)) is not None)
        where = "--target-gpu"
    else:
        cards, where = detected_cards()
    cat = catalogue()
    filters = Filters(args.min_params, args.max_params, tuple(args.family), tuple(args.licences), tuple(args.uses),
                      args.engine)
    source = (f"embedded catalogue version {cat.version}, {len(cat.entries)} models ({'; '.join(cat.sources)}); "
              f"{licence_source()}")
    return best_fit(cat.entries, cards, where, args.context, args.min_bpw, args.min_tok_s, filters,
                    args.limit or None, source, CatalogueReader(model_config, candidates, licence_of))


def _screen(result: FitResult) -> None:
    from doctor.tui.fit_screen import FitApp  # lazy: textual loads only when the screen opens

    FitApp(result).run()


def run(args: argparse.Namespace) -> ExitCode:
    result = make_fit(args)
    hand_over(args, "the ranking", result, fit_to_json, render_fit_markdown, render_fit_text, _screen)
    ranked = {c.row.cards for c in result.choices}
    specs = tuple(spec for k in result.cards if (spec := spec_for_key(k)) is not None)
    return ExitCode.OK if {tuple(c.key for c in g) for g in card_sets(specs)} <= ranked else ExitCode.WARNINGS
