"""--engine and --engine-config on the command line: parsed into the plan, bad input a one-line usage error."""

from __future__ import annotations

import json

import pytest
from conftest import MACHINES, ROOT, run_cli

from doctor.cli.options import build_parser, plan_from_args
from doctor.model.ids import Engine

ENGINES = ROOT / "fixtures" / "machines" / "engines"


def test_engine_and_launch_reach_the_plan():
    args = build_parser().parse_args(["--engine", "ollama", "--engine-config", "llama-server -m /m/x.gguf -ngl 20"])
    plan = plan_from_args(args)
    assert plan.engine == Engine.OLLAMA and plan.engine_launch.n_gpu_layers == 20
    assert plan.model_path == "/m/x.gguf"  # the launch's -m when --model is not given


def test_bad_engine_config_is_a_usage_error():  # exit 3: doctor/model/exitcodes.py USAGE
    proc = run_cli("--replay", str(MACHINES / "v100-pcie-16gb-healthy.json"), "--engine-config", "hello there", "--no-tui")
    assert proc.returncode == 3
    assert "neither a llama-server command line" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("given, words", [
    ("/srv/llama/launch.args", "/srv/llama/launch.args: no such file"),
    ("./ollama-params.txt", "./ollama-params.txt: no such file"),
    ("params.txt", "params.txt: no such file"),
    ("DIR", "a directory, not a file"),
])
def test_a_file_meant_but_not_there_is_named_as_a_file(tmp_path, given, words):
    """A path that is not there used to be read as the launch text itself: "neither a llama-server command line nor
    Ollama's parameters", and "--engine-config" said twice. Now the file is named and what to pass instead."""
    given = str(tmp_path) if given == "DIR" else given
    proc = run_cli("--replay", str(MACHINES / "v100-pcie-16gb-healthy.json"), "--engine-config", given, "--no-tui")
    assert proc.returncode == 3 and proc.stdout == "", proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith("v100-doctor: error: argument --engine-config: ") and words.replace("DIR", str(tmp_path)) in line
    assert line.count("--engine-config") == 1 and "neither" not in line and "pass the file" in line


def test_replayed_engine_fixture_in_json():
    proc = run_cli("--replay", str(ENGINES / "p40-ollama-cuda-v13-only.json"), "--json")
    report = json.loads(proc.stdout)
    found = {f["id"]: f["status"] for f in report["findings"]}
    assert found["engine"] == "fail" and found["engine-build"] == "fail"
    assert report["plan"]["engine_launch"]["engine"] == "ollama"
