"""`v100-doctor plan` end to end: the answer before the table, on one screen; JSON against its schema; Markdown;
-o; a draft model; one-line errors with exit 3; the time the table takes once the Hub has answered."""

from __future__ import annotations

import json
import time

import jsonschema
from conftest import ROOT, run_cli

CONFIG = "fixtures/models/qwen2-27b-exl2-3.75bpw/config.json"
SCHEMA = json.loads((ROOT / "doctor/schema/plan-1.json").read_text())


def test_text_answers_first_on_one_screen():
    done = run_cli("plan", CONFIG, "--min-tok-s", "40", env={"COLUMNS": "120"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    answer = next(i for i, line in enumerate(lines) if line.startswith("* fastest"))
    table = next(i for i, line in enumerate(lines) if line.startswith("All options"))
    assert answer < table and answer < 5
    assert "EXL2 3.75 bpw with the q8 cache" in " ".join(x.strip() for x in lines[answer:answer + 3])
    assert "* longest context at 40 tok/s" in done.stdout
    assert lines.index("Sources of the speed and quality figures:") < len(lines) - 1


def test_json_validates_and_writes_with_o(tmp_path):
    out = tmp_path / "plan.json"
    done = run_cli("plan", CONFIG, "--target-gpu", "p40", "--target-gpu", "t4", "--json", "-o", str(out))
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert json.loads(out.read_text()) == doc
    assert {tuple(r["cards"]) for r in doc["rows"]} == {("p40",), ("t4",), ("p40", "t4")}
    bad = dict(doc, rows=[dict(doc["rows"][0], cache="q3")])
    try:
        jsonschema.validate(bad, SCHEMA)
        raise AssertionError("the schema let an unknown cache type through")
    except jsonschema.ValidationError:
        pass


def test_markdown_and_engine_filter():
    done = run_cli("plan", CONFIG, "--markdown", "--engine", "llama.cpp")
    assert done.returncode in (0, 1), done.stderr
    assert done.stdout.startswith("## Plan for") and "| card | version |" in done.stdout
    assert "exllamav2 |" not in done.stdout.split("| card |")[1]


def test_a_draft_model_is_in_the_budget():
    plain = json.loads(run_cli("plan", CONFIG, "--json").stdout)
    drafted = run_cli("plan", CONFIG, "--json", "--draft", "fixtures/models/tiny-fp16")
    assert drafted.returncode in (0, 1), drafted.stderr
    doc = json.loads(drafted.stdout)
    assert all(r["draft_bytes"] > 0 for r in doc["rows"])
    by = {(r["option"]["label"], r["cache"]): r for r in plain["rows"]}
    assert all(r["peak_bytes"][0] == by[r["option"]["label"], r["cache"]]["peak_bytes"][0] + r["draft_bytes"]
               for r in doc["rows"] if r["fits"])
    assert "draft_model_name: tiny-fp16" in next(r for r in doc["rows"] if r["engine"] == "exllamav2")["commands"]["config"]


def test_bad_input_is_one_line_and_exit_3(tmp_path):
    for args in (["plan", "/no/such/dir"], ["plan", CONFIG, "--target-gpu", "v99"], ["plan", CONFIG, "--context", "12"],
                 ["plan", str(tmp_path)], ["plan", "fixtures/models/tiny-malformed-config"]):
        done = run_cli(*args)
        assert done.returncode == 3 and done.stderr.startswith("v100-doctor") and "Traceback" not in done.stderr, args


def test_the_table_is_quick_once_the_hub_has_answered():
    from doctor.facts.modeldir.config import parse_config
    from doctor.knowledge.gpus import spec_for_key
    from doctor.plan.build import build_plan, standard_candidates

    config = parse_config(json.loads((ROOT / CONFIG).read_text()))
    cards = tuple(spec_for_key(k) for k in ("v100-pcie-16gb", "p40", "t4"))
    start = time.perf_counter()
    plan = build_plan("x", "y", config, standard_candidates(), cards, 8192, min_tok_s=30)
    took = time.perf_counter() - start
    assert len(plan.rows) > 100 and took < 2.0, took
