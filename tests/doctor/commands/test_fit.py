"""`v100-doctor fit` end to end: offline, a V100 16 GB at 8192 tokens lists ranked options with plan's columns and
runnable commands; JSON against the published schema (doctor/schema/fit-1.json, its rows plan-1.json's); Markdown;
-o; one-line errors. The screen: tests/doctor/tui/test_fit_screen.py."""

from __future__ import annotations

import json

import jsonschema
import pytest
from conftest import ROOT, run_cli
from referencing import Registry, Resource

SCHEMA = json.loads((ROOT / "doctor/schema/fit-1.json").read_text())
PLAN = json.loads((ROOT / "doctor/schema/plan-1.json").read_text())
REGISTRY = Registry().with_resources([(PLAN["$id"], Resource.from_contents(PLAN))])
OFFLINE = {"HF_HUB_OFFLINE": "1", "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"}


def validate(doc: dict) -> None:
    jsonschema.Draft202012Validator(SCHEMA, registry=REGISTRY).validate(doc)


def test_v100_at_8192_offline_text():
    done = run_cli("fit", "--target-gpu", "v100-pcie-16gb", "--min-params", "7", "--use", "chat",
                   env=dict(OFFLINE, COLUMNS="200"))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("Models that fit v100-pcie-16gb at 8192 tokens (cards: --target-gpu)")
    assert "score: quality floor first" in out
    table = [line for line in out.splitlines() if line.startswith("  1  ") or line.startswith("  10 ")]
    assert len(table) == 2 and all("v100-pcie-16gb" in line and " yes " in line for line in table)
    assert "download:" in out and ("run:" in out or "config:" in out)
    assert "the base model" not in out


def test_json_validates_against_the_published_schema(tmp_path):
    out = tmp_path / "fit.json"
    done = run_cli("fit", "--target-gpu", "v100-pcie-16gb", "--target-gpu", "p40", "--limit", "3", "--json",
                   "-o", str(out), env=OFFLINE)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    validate(doc)
    assert json.loads(out.read_text()) == doc
    assert doc["schema"] == "v100-doctor/fit/1" and doc["cards"] == ["v100-pcie-16gb", "p40"]
    assert [tuple(r["row"]["cards"]) for r in doc["results"]] == (
        [("v100-pcie-16gb",)] * 3 + [("p40",)] * 3 + [("v100-pcie-16gb", "p40")] * 3)
    assert all(r["row"]["fits"] and r["score"] == r["row"]["speed"]["mid"] for r in doc["results"])
    bad = dict(doc, results=[dict(doc["results"][0], row=dict(doc["results"][0]["row"], cache="q3"))])
    with pytest.raises(jsonschema.ValidationError):
        validate(bad)


def test_markdown_one_language_per_block():
    done = run_cli("fit", "--target-gpu", "t4", "--use", "code", "--limit", "2", "--markdown", env=OFFLINE)
    assert done.returncode == 0, done.stderr
    assert "### On `t4`" in done.stdout and "| # | model |" in done.stdout
    assert "```sh" in done.stdout


def test_without_a_card_here_the_default_says_why():
    done = run_cli("fit", "--limit", "1", "--json", env=OFFLINE)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["cards"] == ["v100-pcie-16gb"]
    assert doc["cards_from"] == "detected" or doc["cards_from"].startswith("default (")


def test_nothing_fits_exits_1():
    done = run_cli("fit", "--target-gpu", "titan-v", "--min-params", "500", env=OFFLINE)
    assert done.returncode == 1, done.stderr
    assert "Nothing in the catalogue fits" in done.stdout


@pytest.mark.parametrize("args,said", [
    (("--min-params", "30", "--max-params", "7"), "--min-params 30 is above --max-params 7"),
    (("--target-gpu", "v200"), "unknown GPU 'v200'"),
    (("--use", "poetry"), "invalid choice"),
])
def test_bad_input_is_one_line(args, said):
    done = run_cli("fit", *args, env=OFFLINE)
    assert done.returncode in (2, 3)
    assert said in done.stderr and "Traceback" not in done.stderr
