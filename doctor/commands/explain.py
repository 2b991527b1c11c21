"""Explain a crash log or console output: the known pitfall behind each error, its fix, and whether this machine confirms it.

Reads llama.cpp (llama-server, llama-cpp-python, LM Studio), Ollama, vLLM, ExLlamaV2, TabbyAPI, torch,
transformers, bitsandbytes, nvcc, pip and kernel output. Each known error is shown with its line number,
the pitfall (the same ids as the checks), the fix and the public issue where it was reported. The
engine is read from the log's own lines (Ollama's msg=/source= lines, llama-server's prints, vLLM's
logger), or taken from --engine, and every fix is worded in that engine's terms. A message that
follows from another one (no layers on the GPU after CUDA failed to start) is shown under its cause. By default the doctor then gathers this machine's facts and
runs the matching checks, so each explanation is confirmed, ruled out, or marked "cannot tell"
with the reason. The log is streamed, never read whole; a 2 GB log is fine.

examples:
  v100-doctor explain run.log                      explain, and confirm on this machine
  python server.py 2>&1 | v100-doctor explain -    read the log from stdin
  v100-doctor explain run.log --no-live            only read the log; do not look at this machine
  v100-doctor explain run.log --replay report.json confirm against a saved report or ticket bundle
  v100-doctor explain run.log --json -o log.json   the analysis as JSON (schema v100-doctor/log-analysis/1)

unexplained lines: lines no known signature matched are never dropped. After a log prefix
(timestamp, level, logger, rank, container, journald or kernel tag) is set aside, a line is
error-looking if a word of it (or a CamelCase part: RuntimeError) starts with error, exception,
fatal, fail, abort, killed, assert, fault, segfault or critical, or it says "out of memory", or its
level is ERROR/CRITICAL; warning-looking if a word starts with warn or its level is WARNING. Words,
not substrings: "Defaulting" is no fault. INFO and DEBUG lines are never error- or warning-looking.
Traceback frames and torch's CUDA boilerplate are framing. All else is ordinary output, only
counted. Repeats of one message (numbers aside) are grouped and counted.

exit codes of explain: 0 nothing error-looking; 1 warning-level pitfalls or unexplained
error-looking lines; 2 a known error that the machine did not rule out; 3 the log cannot be read
(missing, empty, binary, unknown --encoding); 4 the doctor itself failed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import asdict, replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Callable, Iterable

from doctor.cli.options import add_plan_arguments, encoding_name, path_arg, plan_from_args
from doctor.cli.output import text_width, write_whole
from doctor.commands.log_input import open_log
from doctor.facts.host.identities import this_machine
from doctor.knowledge.paste import fit_to_paste
from doctor.logscan.scanner import Scanner
from doctor.logscan.source import LogInputError
from doctor.model.errors import UsageError
from doctor.model.exitcodes import ExitCode
from doctor.model.ids import Engine
from doctor.model.log_analysis import LogAnalysis, LogEngine, PlanHint, analysis_to_json
from doctor.model.plan import Plan
from doctor.model.source import SavedFile
from doctor.render.redact import shareable_analysis
from doctor.render.untrusted import json_for_terminal, visible

if TYPE_CHECKING:
    from doctor.logscan.source import LogSource
    from doctor.model.facts import Facts

PROGRESS_MIN_BYTES = 64 << 20


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("log", metavar="LOGFILE", type=path_arg, help="the log file, or - to read it from stdin")
    p.add_argument("--encoding", metavar="NAME", type=encoding_name, help="the log's encoding when it is not UTF-8 (e.g. gbk, cp1252); "
                                                     "UTF-16 with or without a BOM is detected")
    g = p.add_argument_group("confirming against a machine")
    which = g.add_mutually_exclusive_group()
    which.add_argument("--no-live", action="store_true", help="do not gather this machine's facts; only read the log")
    which.add_argument("--replay", metavar="REPORT", type=path_arg, help="confirm against the facts in a saved report, fixture or bundle")
    o = p.add_argument_group("output")
    fmt = o.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print the analysis as JSON only (schema v100-doctor/log-analysis/1)")
    fmt.add_argument("--markdown", action="store_true", help="print Markdown for a GitHub issue")
    o.add_argument("-o", "--output", metavar="FILE", type=path_arg, help="also write the JSON analysis to FILE")
    o.add_argument("--no-redact", action="store_true", help="keep the log's home paths, host names and secrets in "
                   "every output: text, --json, --markdown and -o (redacted by default)")
    o.add_argument("-v", "--verbose", action="store_true", help="list every kind of unexplained line, not only the first 15")
    add_plan_arguments(p)


def run(args: argparse.Namespace) -> ExitCode:
    analysis = explain(args)
    # every form is redacted alike: text on a terminal is pasted into issues as often as --markdown is; the log's
    # secrets and names are replaced, the doctor's own titles and fixes never (render/redact.shareable_analysis)
    analysis = shareable_analysis(analysis, not args.no_redact, machine=None if args.no_redact else this_machine())
    if args.output:
        try:  # whole or as it was: a full disk or a signal never leaves half a file (write_whole)
            write_whole(args.output, analysis_to_json(analysis) + "\n")
        except OSError as exc:
            raise UsageError(f"cannot write the analysis to {args.output}: {exc.strerror}") from None
        print(f"v100-doctor: analysis written to {args.output}", file=sys.stderr)
    sys.stdout.write(rendered(analysis, args))
    return exit_code(analysis)


def rendered(analysis: LogAnalysis, args: argparse.Namespace) -> str:
    if args.json:
        return json_for_terminal(analysis_to_json(analysis)) + "\n"
    # the log's own text is inside: no escape sequence from it may reach the terminal
    from doctor.render.log_analysis import render_markdown, render_text  # lazy: text and Markdown only (their report model: ~0.1 s)

    return visible(render_markdown(analysis) if args.markdown else
                   render_text(analysis, verbose=args.verbose, width=text_width(sys.stdout)))


def log_head(source: LogSource, lines: int = 200) -> tuple[str, ...]:
    """The first lines of the log as sniffed (64 KiB at most, already read): where a paste shows its shell."""
    return tuple(source.head.decode(source.encoding, "replace").splitlines()[:lines])


def explain(args: argparse.Namespace, facts: Facts | None = None, base_plan: Plan | None = None, facts_source: str = "") -> LogAnalysis:
    """Scan the log, then confirm against given facts, a replayed report, or this machine (in that order)."""
    if getattr(args, "replay", None) and facts is None:  # a bad --replay is an input error even if no line matches
        from doctor.facts.replay import load_document  # lazy: only a replay reads a report (its model: ~0.1 s of start-up)

        load_document(args.replay)
    _refuse_missing_model(args)
    try:
        source = open_log(args.log, args.encoding)
    except LogInputError as exc:
        raise UsageError(str(exc)) from None
    try:
        result = Scanner(engine=getattr(args, "engine", None)).scan(source, _progress_printer(source.name))
    except LogInputError as exc:
        raise UsageError(str(exc)) from None
    finally:
        source.close()
    if result.stats.undecodable_lines:
        print(f"v100-doctor: note: {result.stats.undecodable_lines} examined line(s) of {source.name} are not valid "
              f"{result.stats.encoding}; they were read with � in place of the bad bytes (pass --encoding NAME "
              "if the log is in another encoding)", file=sys.stderr)
    matches = fit_to_paste(result.matches, result.plan_hints, log_head(source))  # Windows shell lines, the log's own settings
    confirm = bool(matches) and not getattr(args, "no_live", False)
    if confirm and facts is None:
        facts, base_plan, facts_source = _facts_for(args)
    elif not confirm:
        facts_source = "not gathered (--no-live)" if getattr(args, "no_live", False) else "not needed (no known pitfall in the log)"
    plan = plan_with_engine(plan_with_hints(plan_from_args(args, base_plan), result.plan_hints, args), result.engine)
    if confirm:
        from doctor.run.confirm import confirm_matches  # lazy: the checks load only to confirm (--no-live never)

        matches, _ = confirm_matches(matches, plan, facts)
    return LogAnalysis(log=result.stats, matches=matches, unexplained=result.unexplained,
                       plan_hints=result.plan_hints, engine=result.engine, facts_source=facts_source or "live",
                       plan_used={k: v for k, v in asdict(plan).items() if v is not None},
                       created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"))


def _refuse_missing_model(args: argparse.Namespace) -> None:
    """--model naming nothing is an input error (exit 3), as in the main command's model-path check; a Hub id
    (org/name) is left to the plan."""
    model = getattr(args, "model", None)
    if not model:
        return
    path = " ".join(model) if isinstance(model, list) else str(model)
    from doctor.facts.hub.model_id import hub_id  # lazy: only --model names one (the Hub reader and its models load then)

    if hub_id(path) is None and not os.path.lexists(os.path.expanduser(path)):
        raise UsageError(f"--model {path!r}: no such file or directory")


def plan_with_hints(plan: Plan, hints: Iterable[PlanHint], args: argparse.Namespace) -> Plan:
    """Settings the log printed (max_seq_len, cache_mode) fill what the command line did not give."""
    changes = {h.field: h.value for h in hints if getattr(args, h.field, None) is None}
    return replace(plan, **changes) if changes else plan


def plan_with_engine(plan: Plan, engine: LogEngine) -> Plan:
    """The engine the log shows is the one the checks judge, unless --engine or the saved plan named one."""
    if plan.engine is not None or engine.engine is None:
        return plan
    return replace(plan, engine=Engine(engine.engine))


def _facts_for(args: argparse.Namespace) -> tuple[Facts | None, Plan | None, str]:
    """(facts, the saved plan, a label): a replayed document's, or None to gather this machine's."""
    if args.replay:
        from doctor.facts.source import resolve  # lazy: only a replay resolves a saved source

        resolved = resolve(SavedFile(args.replay))
        return resolved.facts, resolved.plan, resolved.provenance.to_wire()
    print("v100-doctor: gathering this machine's facts to confirm the matches (--no-live skips this) …", file=sys.stderr)
    return None, None, "live (this machine)"


def _progress_printer(name: str) -> Callable[[int, int | None], None] | None:
    if not sys.stderr.isatty():
        return None
    started = time.perf_counter()
    last = [0.0]

    def progress(done: int, total: int | None) -> None:
        now = time.perf_counter()
        if (total or done) < PROGRESS_MIN_BYTES or now - last[0] < 0.5:
            return
        last[0] = now
        rate = done / 1e6 / max(now - started, 1e-9)
        of = f" / {total / 1e6:,.0f}" if total else ""
        end = "\n" if total and done >= total else ""
        print(f"\rscanning {name}: {done / 1e6:,.0f}{of} MB ({rate:,.0f} MB/s)", end=end, file=sys.stderr, flush=True)

    return progress


def exit_code(analysis: LogAnalysis) -> ExitCode:
    standing = [m for m in analysis.matches if not (m.confirmation and m.confirmation.verdict == "ruled-out")]
    if any(m.severity == "error" for m in standing):
        return ExitCode.FAILURES
    if any(m.severity == "warning" for m in standing) or analysis.unexplained.error_lines:
        return ExitCode.WARNINGS
    return ExitCode.OK
