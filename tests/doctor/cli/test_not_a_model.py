"""--model that names no model fails fast (issue 26): the one-line error and exit 3 before this machine is read, a
screen opens or a report is printed; -o still gets a partial report. In-process, with the machine's readers made to
fail the test if they are reached."""

from __future__ import annotations

import importlib
import json
import shutil
from pathlib import Path

import pytest
from conftest import MACHINES, run_cli
from model_support import copy_fixture

from doctor.cli import main as cli_main

HEALTHY = str(MACHINES / "v100-pcie-16gb-healthy.json")


def _empty(tmp: Path) -> Path:
    (tmp / "empty").mkdir()
    return tmp / "empty"


def _unrelated(tmp: Path) -> Path:
    d = tmp / "photos"
    (d / "2024").mkdir(parents=True)
    (d / "notes.txt").write_text("shopping list\n")
    (d / "cat.jpg").write_bytes(b"\xff\xd8\xff\xe0" + b"\0" * 64)
    return d


def _app_config(tmp: Path) -> Path:
    d = tmp / "webapp"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"name": "my-app", "port": 8080, "debug": False}))
    return d


def _plain_file(tmp: Path) -> Path:
    (tmp / "README.md").write_text("# not a model\n")
    return tmp / "README.md"


def _html_saved_as_gguf(tmp: Path) -> Path:
    (tmp / "qwen2.5-32b-Q4_K_M.gguf").write_text("<!DOCTYPE html><html><body>Sign in</body></html>\n")
    return tmp / "qwen2.5-32b-Q4_K_M.gguf"


def _missing(tmp: Path) -> Path:
    return tmp / "no-such-model"


NOT_MODELS = {  # name -> (builder, words the one line must hold)
    "empty directory": (_empty, "not a model directory: no config.json"),
    "unrelated files": (_unrelated, "not a model directory: no config.json"),
    "config.json that is no model's": (_app_config, "its config.json is not a model's config"),
    "a file, not a directory": (_plain_file, "a file, not a model directory"),
    "a .gguf that is not GGUF": (_html_saved_as_gguf, "named .gguf but not a GGUF file"),
    "a path that does not exist": (_missing, "no such file or directory"),
}


@pytest.fixture
def machine_never_read(monkeypatch):
    """A live run that reads this machine (NVML, torch) or opens a screen fails the test."""
    def reached(*_a, **_k):
        raise AssertionError("the run went on past a --model that names no model")

    monkeypatch.setattr(importlib.import_module("doctor.facts.source"), "gather_live", reached)
    monkeypatch.setattr(importlib.import_module("doctor.facts.torch_facts"), "TorchGatherer", reached)
    monkeypatch.setattr(importlib.import_module("doctor.cli.tui"), "run_tui", reached)


@pytest.mark.parametrize("case", NOT_MODELS)
def test_a_path_that_names_no_model_is_one_line_and_exit_3_before_any_report(case, tmp_path, capsys, machine_never_read):
    build, words = NOT_MODELS[case]
    path = str(build(tmp_path))
    assert cli_main(["--model", path, "--no-tui"]) == 3
    out, err = capsys.readouterr()
    assert out == ""  # no report first
    (line,) = err.splitlines()
    assert line.startswith(f"v100-doctor: error: --model {path!r}: ") and words in line
    assert "pass " in line.split(words, 1)[1]  # and what to pass instead


@pytest.mark.parametrize("face", [["--json"], ["--markdown"], ["--target-gpu", "v100-pcie-16gb"], ["--replay", HEALTHY]])
def test_every_face_and_source_refuses_it_first(face, tmp_path, capsys, machine_never_read):
    assert cli_main(["--model", str(_empty(tmp_path)), "--no-tui", *face]) == 3
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and "not a model directory" in err


def test_the_tui_is_not_opened(tmp_path, monkeypatch, capsys, machine_never_read):
    monkeypatch.setattr(importlib.import_module("doctor.cli.main"), "wants_tui", lambda args: True)
    assert cli_main(["--model", str(_app_config(tmp_path))]) == 3
    assert "its config.json is not a model's config" in capsys.readouterr().err


def test_live_o_gets_a_partial_report_with_the_model_and_nothing_of_this_machine(tmp_path, capsys, machine_never_read, validate):
    out = tmp_path / "r.json"
    assert cli_main(["--model", str(_unrelated(tmp_path)), "--json", "-o", str(out)]) == 3
    stdout, err = capsys.readouterr()
    assert stdout == "" and f"report written to {out}" in err
    report = validate(json.loads(out.read_text()))
    found = {f["id"]: f for f in report["findings"]}
    assert found["model-path"]["status"] == "fail" and found["model-path"]["evidence"]["input_error"]
    assert report["errors"] and "the run stopped at --model" in report["errors"][0]
    assert "stopped before reading this machine" in json.dumps(report["facts"]["nvml"])


def test_replay_o_gets_the_recorded_machine_judged_with_the_model_read_here(tmp_path, capsys, validate):
    out = tmp_path / "r.json"
    assert cli_main(["--model", str(_html_saved_as_gguf(tmp_path)), "--replay", HEALTHY, "-o", str(out), "--no-tui"]) == 3
    assert capsys.readouterr().out == ""
    found = {f["id"]: f for f in validate(json.loads(out.read_text()))["findings"]}
    assert found["gpu-present"]["status"] == "pass" and found["model-path"]["status"] == "fail"


def test_a_model_still_runs_and_a_replay_keeps_the_model_it_recorded(tmp_path, capsys):
    """The refusal reads this machine's disk only for a model the run would read here: a replayed report whose model
    has since gone still shows what it recorded."""
    d = copy_fixture("tiny-exl2", tmp_path / "model")
    report_file = tmp_path / "r.json"
    assert cli_main(["--model", str(d), "--replay", HEALTHY, "--json", "-o", str(report_file)]) in (0, 1, 2)
    assert json.loads(capsys.readouterr().out)["plan"]["model_path"] == str(d)
    shutil.rmtree(d)
    assert cli_main(["--model", str(d), "--replay", str(report_file), "--json"]) in (0, 1, 2)
    found = {f["id"]: f for f in json.loads(capsys.readouterr().out)["findings"]}
    assert found["model-path"]["status"] == "pass"


def test_checks_that_do_not_judge_the_model_are_not_stopped_by_it(tmp_path, capsys):
    assert cli_main(["--model", str(_empty(tmp_path)), "--replay", HEALTHY, "--check", "gpu-present", "--json"]) == 0
    assert [f["id"] for f in json.loads(capsys.readouterr().out)["findings"]] == ["gpu-present"]


def test_a_hub_id_unknown_offline_is_one_line_and_exit_3(tmp_path):
    """org/name that is not in the cache, with HF_HUB_OFFLINE set (a child: huggingface_hub reads it at import)."""
    proc = run_cli("--model", "someone/no-such-model", "--no-tui", "--target-gpu", "v100-pcie-16gb",
                   env={"HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(tmp_path)})
    assert proc.returncode == 3 and proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert "--model someone/no-such-model: not in the Hugging Face cache" in line and "hf download" in line

