"""`v100-doctor demo`: recorded examples, labelled as such, verdicts computed now from their probes."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

from doctor.model.source import BundledExample, example
from doctor.render.text import render_text
from doctor.run.examples import example_names, load_example, replay_example

SEED_STAGES = {  # the reference story's journey: speed, and the pitfall its verdict must name
    "seed-1-transformers-bnb": (4.0, "kernel-path"),
    "seed-2-exl2-4.25bpw": (25.0, "cpu-offload"),
    "seed-3-q8-cache-8192": (40.0, None),  # no published evidence of a cause: the largest fix is the lower bpw
    "seed-4-exl2-3.75bpw": (64.05, None),  # near the ceiling
}


def test_the_examples_are_the_seed_journey_then_an_h200():
    assert example_names() == [*SEED_STAGES, "h200-synthetic-gptq"]


@pytest.mark.parametrize("name", example_names())
def test_every_example_is_labelled_recorded_and_says_where_it_comes_from(name):
    report = load_example(name)
    assert report.source == example(name)
    assert ("Rebuilt from the reference story" in report.note) != name.startswith("h200")
    assert name.startswith("seed") or report.note.startswith("Measured for real on an NVIDIA H200")
    text = render_text(replay_example(name), width=10_000)  # unwrapped: the header in one line
    assert text.splitlines()[0].endswith(f"RECORDED EXAMPLE ({name}), not this machine: {report.note}")
    assert "this machine, live" not in text


@pytest.mark.parametrize("name", list(SEED_STAGES))
def test_each_seed_stage_names_its_pitfall(name):
    tok_s, cause = SEED_STAGES[name]
    v = replay_example(name).verdict
    assert v.measured_tok_s == tok_s
    if cause:
        assert v.top_cause.id == cause and v.top_cause.share > 0.9
    elif name.startswith("seed-3"):
        assert v.fixes[0].cause == "bpw" and "3.75 bpw instead of 4.25" in v.headline
    else:
        assert v.near_ceiling and v.datasheet.tok_s_weights_only == pytest.approx(70.9, abs=0.05)
        assert v.efficiency >= 0.9


def test_the_recorded_h200_case_is_launch_bound_with_utilisation_as_evidence():
    v = replay_example("h200-synthetic-gptq").verdict
    top = v.top_cause
    assert top.id == "launch-bound" and top.share > 0.5
    assert top.evidence["gpu_util_pct"] > 70 and top.evidence["memory_util_pct"] < 40
    assert v.first_use and "cuDNN" in v.first_use
    fix = next(f for f in v.fixes if f.cause == "first-use")
    assert fix.expected_gain_tok_s is None  # recorded before the probe measured the fix: no extrapolated promise


def test_demo_cli_lists_replays_and_prints_json():
    listed = run_cli("demo", "--list")
    assert listed.returncode == 0 and "seed-1-transformers-bnb" in listed.stdout
    one = run_cli("demo", "seed-4-exl2-3.75bpw", "--json")
    assert one.returncode == 0
    doc = json.loads(one.stdout)
    assert doc["source"] == "example:seed-4-exl2-3.75bpw" and doc["verdict"]["near_ceiling"] is True
    bad = run_cli("demo", "no-such-example")
    assert bad.returncode == 3 and "no example named no-such-example" in bad.stderr
    assert run_cli("demo", "--json").returncode == 3  # one report at a time


def test_demo_json_matches_the_schema(validate):
    for name in example_names():
        from doctor.model.report import report_to_dict

        validate(report_to_dict(replay_example(name)))


def test_demo_on_a_terminal_opens_the_story_view_over_every_example(monkeypatch):
    """On a TTY the demo is the story view (issue 13): every example replayed, in story order; `demo NAME` opens
    that example's report first."""
    import doctor.cli.options
    import doctor.cli.tui
    from doctor.cli import main
    from doctor.cli.tui import session_from_args
    from doctor.run.examples import example_names

    seen = []
    monkeypatch.setattr(doctor.cli.options, "wants_tui", lambda args: True)
    monkeypatch.setattr(doctor.cli.tui, "run_tui", lambda args, checks=None: seen.append(session_from_args(args, checks)) or 1)
    assert main(["demo"]) == 0 and main(["demo", "seed-3-q8-cache-8192"]) == 1  # the tour exits 0, as its help says
    story, named = seen
    assert [name for name, _ in story.story] == example_names() and story.story_start is None
    assert story.run.source == BundledExample("seed-1-transformers-bnb")
    assert named.story_start == "seed-3-q8-cache-8192" and named.run.source == BundledExample("seed-3-q8-cache-8192")
    assert all(report.verdict is not None for _, report in story.story)  # today's verdict on each


@pytest.mark.parametrize("screen,tour,named", [(0, 0, 0), (1, 0, 1), (2, 0, 2), (130, 130, 130), (129, 129, 129)])
def test_the_tour_on_a_screen_exits_as_its_help_says(monkeypatch, screen, tour, named):
    """Issue 39: `q` in the demo's story view exited 1 (an example's warnings) while its help says the tour exits 0;
    an interrupt stays an interrupt, and `demo NAME` exits as --replay of it."""
    import doctor.cli.options
    import doctor.cli.tui
    from doctor.cli import main
    from doctor.model.exitcodes import command_codes

    monkeypatch.setattr(doctor.cli.options, "wants_tui", lambda args: True)
    monkeypatch.setattr(doctor.cli.tui, "run_tui", lambda args, checks=None: screen)
    assert main(["demo"]) == tour and main(["demo", "seed-2-exl2-4.25bpw"]) == named
    assert {int(c) for c, _ in command_codes("demo")} >= {tour, named}


def test_demo_list_prints_every_note_whole(capsys):
    from doctor.cli import main
    from doctor.run.examples import example_names, load_example

    assert main(["demo", "--list"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    for name in example_names():
        assert " ".join(load_example(name).note.split()) in out  # not cut at 110 characters


@pytest.mark.parametrize("name", example_names())
def test_every_command_a_demo_prints_runs_as_printed(name):
    """A doctor command in an example's fixes parses as the CLI would take it, with no label inside a path (issue 26)."""
    import importlib
    import shlex

    from doctor.cli.options import SUBCOMMANDS, Parser, build_parser

    text = render_text(replay_example(name), verbose=True)
    commands = [line.strip()[2:] for line in text.splitlines() if line.strip().startswith("$ v100-doctor ")]
    for command in commands:
        argv = shlex.split(command)[1:]
        if argv and argv[0] in SUBCOMMANDS:
            sub = Parser(prog=f"v100-doctor {argv[0]}")
            importlib.import_module(SUBCOMMANDS[argv[0]][0]).add_arguments(sub)
            args = sub.parse_args(argv[1:])
        else:
            args = build_parser().parse_args(argv)
        model = getattr(args, "model", None)
        assert not any("(" in m for m in (model if isinstance(model, list) else [model] if model else [])), command


def test_each_story_stage_shows_what_its_next_recorded_stage_measured():
    """Issue 39: stage 3's estimate read +3.1 tok/s where the recorded story says +24: the demo shows what its data
    says, the step each stage's next stage measured, beside the verdict's estimate."""
    from conftest import run_cli

    from doctor.run.examples import example_names, replay_example

    stages = [n for n in example_names() if n.startswith("seed-")]
    for this, following in zip(stages, stages[1:]):
        now, then = replay_example(this).verdict.measured_tok_s, replay_example(following).verdict.measured_tok_s
        out = " ".join(run_cli("demo", this, "--no-tui").stdout.split())
        assert f"The story's next step, as recorded ({following}): {then:.1f} tok/s, {then - now:+.1f} tok/s" in out
    assert "+24.0 tok/s over this stage's 40.0" in " ".join(run_cli("demo", "seed-3-q8-cache-8192", "--no-tui").stdout.split())
    assert "next step, as recorded" not in run_cli("demo", stages[-1], "--no-tui").stdout


def test_after_the_story_the_code_is_the_named_examples_whichever_stage_was_shown(capsys):
    """`demo NAME` exits as --replay of NAME even when another stage was on screen at the quit; plain `demo` 0."""
    from types import SimpleNamespace

    from doctor.cli.hangup import HangupGuard
    from doctor.cli.output import exit_code_for
    from doctor.cli.tui import _after_the_screen
    from doctor.run.session import story_session

    named = story_session("seed-3-q8-cache-8192")
    shown = dict(named.story)["seed-4-exl2-3.75bpw"]  # the user moved to another stage, then pressed q
    expected = int(exit_code_for(dict(named.story)["seed-3-q8-cache-8192"]))
    assert expected != int(exit_code_for(shown))  # the test can tell the two apart
    guard = HangupGuard(end=lambda code: None)
    assert _after_the_screen(SimpleNamespace(return_code=0, session=named), shown, guard) == expected
    tour = story_session()
    warned = dict(tour.story)["seed-2-exl2-4.25bpw"]
    assert int(exit_code_for(warned)) == 1 and _after_the_screen(SimpleNamespace(return_code=0, session=tour), warned, guard) == 0
    capsys.readouterr()
