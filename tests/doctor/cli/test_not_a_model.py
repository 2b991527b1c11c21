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

    for name in ("doctor.facts.gather", "doctor.run.pipeline"):  # imported first, so that a module that binds these
        importlib.import_module(name)  # names at import never keeps the stand-ins after the test
    monkeypatch.setattr(importlib.import_module("doctor.facts.source"), "gather_live", reached)
    monkeypatch.setattr(importlib.import_module("doctor.facts.python.torch_facts"), "TorchGatherer", reached)
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


@pytest.mark.parametrize("engine", [[], ["--engine", "llama.cpp"], ["--engine", "transformers"]], ids=["exllamav2", "llama.cpp", "transformers"])
@pytest.mark.parametrize("case", NOT_MODELS)
def test_probe_refuses_it_first_for_every_engine(case, engine, tmp_path, capsys, monkeypatch, machine_never_read):
    """`probe --model EMPTY_DIR` used to read the machine and print a whole report (exit 2): now the same line and
    exit 3 as the main command, before any engine's probe is started; -o gets the partial report."""
    from doctor.commands import probe, probe_transformers

    def started(*_a, **_k):
        raise AssertionError("a probe started for a --model that names no model")

    monkeypatch.setattr(probe, "Run", started)
    monkeypatch.setattr(probe_transformers, "run_compare", started)  # every engine's probe starts in the one Run
    build, words = NOT_MODELS[case]
    path, out = str(build(tmp_path)), tmp_path / "partial.json"
    assert cli_main(["probe", "--model", path, *engine, "-o", str(out)]) == 3
    stdout, err = capsys.readouterr()
    assert stdout == ""
    (line,) = [x for x in err.splitlines() if "report written" not in x]
    assert line.startswith(f"v100-doctor: error: --model {path!r}: ") and words in line
    assert "the run stopped at --model" in json.loads(out.read_text())["errors"][0]


def _tabby_config(tmp: Path, model: Path) -> list[str]:
    config = tmp / "tabby" / "config.yml"
    config.parent.mkdir()
    config.write_text(f"model:\n  model_dir: {json.dumps(str(model.parent))}\n  model_name: {json.dumps(model.name)}\n")
    return ["--tabby-config", str(config)]


def _engine_config(tmp: Path, model: Path) -> list[str]:
    return ["--engine-config", f"llama-server -m {model} -ngl 99 -c 8192"]


WRITTEN_IN = {  # where the user wrote the path -> (the flags, how the one line names it)
    "tabby-config": (_tabby_config, "TabbyAPI's config.yml model_dir/model_name"),
    "engine-config": (_engine_config, "--engine-config's -m"),
}


@pytest.mark.parametrize("written_in", WRITTEN_IN)
@pytest.mark.parametrize("case", NOT_MODELS)
def test_a_path_from_a_config_is_named_where_it_was_written(case, written_in, tmp_path, capsys, machine_never_read):
    """A TabbyAPI config.yml or a llama-server command line that names no model: the line named `--model`, a flag
    the user never typed; now it names the config's own key."""
    build, words = NOT_MODELS[case]
    flags, named = WRITTEN_IN[written_in]
    path = build(tmp_path)
    assert cli_main([*flags(tmp_path, path), "--no-tui"]) == 3
    out, err = capsys.readouterr()
    assert out == ""
    (line,) = [x for x in err.splitlines() if not x.startswith("v100-doctor: TabbyAPI config")]
    assert line.startswith(f"v100-doctor: error: {named} {str(path)!r}: ") and words in line, line
    assert "--model" not in line


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

