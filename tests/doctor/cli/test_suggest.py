"""CLI manners (issue 26): a misspelt word gets the closest subcommand or flag, the usage line names the
subcommands, choices take any case, --model takes one path, an example's name works where a report is expected."""

from __future__ import annotations

import pytest
from conftest import MACHINES, run_cli

from doctor.cli.options import build_parser, one_model
from doctor.cli.suggest import unrecognized
from doctor.model.errors import UsageError

FIXTURE = str(MACHINES / "v100-torch-2.11-cu130.json")


@pytest.mark.parametrize("argv,expected", [
    (["explian", "x.log"], "did you mean 'explain'?"),
    (["demoo"], "did you mean 'demo'?"),
    (["--jsn"], "did you mean --json?"),
    (["--replay", FIXTURE, "--cahce-mode", "q8"], "did you mean --cache-mode?"),
    (["--no-tui", "demo"], "the subcommand demo goes first: v100-doctor demo ..."),
    (["--model", "/m/qwen27b", "demo"], "a subcommand goes first: v100-doctor demo ..."),
])
def test_a_misspelt_or_misplaced_word_gets_the_closest_one(argv, expected):
    with pytest.raises(UsageError) as err:
        build_parser().parse_args(argv)
    assert expected in str(err.value)


def test_the_real_cli_suggests_and_exits_3_before_any_run():
    proc = run_cli("explian", "x.log")
    assert proc.returncode == 3 and not proc.stdout
    assert proc.stderr.strip().splitlines() == [
        "v100-doctor: error: unknown subcommand 'explian'; did you mean 'explain'? "
        "(subcommands: explain, bundle, watch, probe, fleet, plan, fit, demo) (see: v100-doctor --help)"]
    proc = run_cli("watch", "--secnds", "3")
    assert proc.returncode == 3 and "unknown flag --secnds; did you mean --seconds?" in proc.stderr


def test_a_word_nothing_is_close_to_is_named_as_before():
    assert unrecognized("v100-doctor", ["zzz"], ["zzz"], ["--json"], ("demo",)) == "unrecognized arguments: zzz"


def test_the_usage_line_names_the_subcommands():
    usage = build_parser().format_usage()
    assert usage.startswith("usage: v100-doctor {explain,bundle,watch,probe,fleet,plan,fit,demo} ...\n       v100-doctor [-h]")


def test_choices_take_any_case():
    assert build_parser().parse_args(["--cache-mode", "Q8"]).cache_mode == "q8"
    assert build_parser().parse_args(["--cache-mode", "FP16"]).cache_mode == "fp16"
    with pytest.raises(UsageError):
        build_parser().parse_args(["--cache-mode", "Q9"])


def test_model_takes_exactly_one_path():
    with pytest.raises(UsageError) as err:
        build_parser().parse_args(["--model", "/data/tmp/qwen27b", "exl2"])
    assert "--model '/data/tmp/qwen27b exl2'" in str(err.value)
    args = build_parser().parse_args(["--model", "/data/tmp/qwen27b exl2"])
    assert one_model(args.model) == "/data/tmp/qwen27b exl2"
    with pytest.raises(UsageError, match="given 2 times"):
        one_model(build_parser().parse_args(["--model", "a", "--model", "b"]).model)


def test_model_then_a_subcommand_is_refused_before_a_diagnosis():
    proc = run_cli("--model", "/nonexistent/m", "demo")
    assert proc.returncode == 3 and not proc.stdout and len(proc.stderr.strip().splitlines()) == 1


def test_an_examples_name_works_where_a_report_is_expected():
    proc = run_cli("--replay", "seed-2-exl2-4.25bpw", "--no-tui")
    assert proc.returncode in (0, 1, 2) and "RECORDED EXAMPLE (seed-2-exl2-4.25bpw)" in proc.stdout
    proc = run_cli("--replay", "seed-2-exl2-4.2bpw", "--no-tui")
    assert proc.returncode == 3 and "did you mean the recorded example seed-2-exl2-4.25bpw?" in proc.stderr
    assert "v100-doctor demo seed-2-exl2-4.25bpw" in proc.stderr


def test_every_subcommands_choices_take_any_case():
    proc = run_cli("probe", "--synthetic", "--second-pass", "NEVER", "--help")
    assert proc.returncode == 0
    from doctor.cli.options import Parser

    p = Parser(prog="x")
    p.add_argument_group("g").add_argument("--engine", choices=("exllamav2", "llama.cpp"))
    assert p.parse_args(["--engine", "LLAMA.CPP"]).engine == "llama.cpp"
