"""Replay recorded example cases: what the doctor says, without a V100 (or any GPU) here.

The examples are labelled RECORDED and are never this machine. Four are the reference story's
journey on a V100 16 GB, rebuilt from its published figures (each example's note says what is
published and what is assumed): Transformers + bitsandbytes at 4 tok/s, EXL2 4.25 bpw at 25,
a Q8 cache with a lower max_seq_len at 40, and 3.75 bpw at 64 tok/s near the 70.9 ceiling.
One is an H200 run recorded for real. Today's checks and verdict run on each.

`demo NAME` is `--replay` of that example: the same findings, verdict and exit code. `demo` alone is a tour
of them all and exits 0.

examples:
  v100-doctor demo                      every example, in order
  v100-doctor demo --list               their names and what each shows
  v100-doctor demo seed-2-exl2-4.25bpw -v
  v100-doctor demo h200-synthetic-gptq --json
"""

from __future__ import annotations

import argparse
import sys

from doctor.cli import options
from doctor.cli import tui as cli_tui
from doctor.cli.output import emit, text_width
from doctor.model.errors import ReplayError, UsageError
from doctor.model.exitcodes import ExitCode
from doctor.model.report import Report
from doctor.render.common import wrap
from doctor.run.examples import example_names, load_example, replay_example


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("names", nargs="*", metavar="NAME", help="which examples (default: all, in order)")
    p.add_argument("--list", action="store_true", help="list the examples and exit")
    options.add_output_arguments(p)


def run(args: argparse.Namespace) -> ExitCode:
    names = example_names()
    if args.list:
        for n in names:  # each note whole: the stages differ in their last words
            print(n)
            print("\n".join(wrap(load_example(n).note, "    ", "    ", text_width(sys.stdout))))
        return ExitCode.OK
    chosen = args.names or names
    unknown = [n for n in chosen if n not in names]
    if unknown:
        raise UsageError(f"no example named {', '.join(unknown)}; known: {', '.join(names)}")
    if args.json and len(chosen) > 1:
        raise UsageError("--json prints one report: name one example (see --list)")

    if options.wants_tui(args):  # looked up here, not bound at import: tests choose the face
        return open_in_tui(chosen, named=bool(args.names))
    codes = []
    for i, name in enumerate(chosen):
        try:
            report = replay_example(name)
        except ReplayError as exc:
            raise UsageError(str(exc)) from None
        if i and not args.json:
            sys.stdout.write("\n" + "=" * 100 + "\n\n")
        codes.append(emit(report, args))
        if not args.json and (step := recorded_step(name, report, names)):
            sys.stdout.write("\n" + "\n".join(wrap(step, "", "  ", text_width(sys.stdout))) + "\n")
    return ExitCode(max(codes)) if args.names else ExitCode.OK  # type: ignore[call-arg]  # a lookup by value: __new__'s description only defines members


def recorded_step(name: str, report: Report, names: list[str]) -> str:
    """For a stage of the recorded story: what its next stage measured, beside the verdict's estimate for its top
    fix, so the demo shows what its data says (stage 3's bpw step estimates +3.1 tok/s from the bytes it saves; the
    story's next stage measured +24)."""
    stages = [n for n in names if n.startswith("seed-")]
    if name not in stages or name == stages[-1] or report.verdict is None:
        return ""
    following = stages[stages.index(name) + 1]
    after = replay_example(following).verdict
    if after is None:
        return ""
    now, then = report.verdict.measured_tok_s, after.measured_tok_s
    top = next((f for f in report.verdict.fixes if f.expected_gain_tok_s is not None), None)
    estimate = (f" The verdict's estimate for its top fix above is {top.expected_gain_tok_s:+.1f} tok/s: it counts only "
                "what this stage's evidence measures, so the two can differ." if top else "")
    return (f"The story's next step, as recorded ({following}): {then:.1f} tok/s, {then - now:+.1f} tok/s over this "
            f"stage's {now:.1f}.{estimate}")


def open_in_tui(chosen: list[str], named: bool) -> ExitCode:
    """On a terminal the demo is the story view: every example's stage side by side (arrows move, enter opens
    one's full report); `demo NAME` opens that example's report, the story one escape away."""
    args = options.build_parser().parse_args([])
    args.story, args.story_start = True, (chosen[0] if named else None)  # doctor.run.session.session_from_args
    code = ExitCode(cli_tui.run_tui(args))  # type: ignore[call-arg]  # a lookup by value, as above
    if not named and code in (ExitCode.WARNINGS, ExitCode.FAILURES):  # the tour exits 0 on a screen as in plain text:
        return ExitCode.OK  # its examples' findings are recorded cases, not this machine's
    return code
