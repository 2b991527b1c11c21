"""TabbyAPI's config.yml: its own config_sample.yml at two commits (fixtures/tabby/SOURCES.md), every setting the
plan takes, the "k,v" cache pairs, unknown keys reported, bad files exit 3; and `watch --config` reads it the same."""

from __future__ import annotations

import pytest
from conftest import ROOT, run_cli

from doctor.facts.engines.launch_config import read_launch_config
from doctor.facts.engines.tabby_config import DRAFT_KEYS, MODEL_KEYS, describe, read_tabby_config, tabby_plan
from doctor.model.errors import UsageError
from doctor.model.plan import Plan

TABBY = ROOT / "fixtures" / "tabby"
SAMPLES = sorted(TABBY.glob("config_sample-*.yml"))
MODELS = ROOT / "fixtures" / "models"


def sample_with(tmp_path, sample, **edits) -> str:
    """TabbyAPI's sample with some `key: value` lines changed, comments and all else as shipped."""
    lines = sample.read_text().splitlines()
    for key, value in edits.items():
        hits = [i for i, line in enumerate(lines) if line.strip().startswith(f"{key}:")]
        assert hits, f"{key} is not in {sample.name}"
        indent = lines[hits[0]][: len(lines[hits[0]]) - len(lines[hits[0]].lstrip())]
        lines[hits[0]] = f"{indent}{key}: {value}"
    path = tmp_path / "config.yml"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_the_shipped_sample_reads_with_its_defaults_and_no_unknown_keys(sample):
    s = read_tabby_config(str(sample))
    assert s.unknown_keys == ()  # every key TabbyAPI documents is known
    assert (s.model_path, s.max_seq_len, s.cache_mode, s.gpu_split, s.gpu_split_auto) == (None, None, "fp16", None, True)
    assert s.autosplit_reserve_mb == (96.0,) and s.chunk_size == 2048 and s.tensor_parallel is False
    assert s.draft_model_path is None and "TabbyAPI starts without a model" in describe(s)


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_every_planned_setting_is_taken_from_the_sample(tmp_path, sample):
    path = sample_with(tmp_path, sample, model_dir=str(MODELS), model_name="qwen2-27b-exl2-4.25bpw",
                       max_seq_len=8192, cache_size=16384, cache_mode="Q4", gpu_split_auto="false",
                       gpu_split="[10, 14.5]", tensor_parallel="true", chunk_size=1024,
                       draft_model_name="tiny-exl2", draft_model_dir=str(MODELS), draft_cache_mode="Q8")
    s = read_tabby_config(path)
    assert s.model_path == str(MODELS / "qwen2-27b-exl2-4.25bpw") and s.cache_mode == "q4"
    assert (s.max_seq_len, s.cache_size, s.gpu_split, s.tensor_parallel, s.chunk_size) == (8192, 16384, (10.0, 14.5), True, 1024)
    assert s.draft_model_path == str(MODELS / "tiny-exl2") and s.draft_cache_mode == "q8"
    plan = tabby_plan(s, Plan())
    assert (plan.model_path, plan.max_seq_len, plan.cache_mode, plan.gpu_split, plan.tensor_parallel) == \
        (s.model_path, 16384, "q4", (10.0, 14.5), True)  # the cache holds cache_size tokens: that is what fits or not


def test_a_relative_model_dir_is_the_config_folders_and_autosplit_ignores_gpu_split(tmp_path):
    path = sample_with(tmp_path, SAMPLES[-1], model_name="my-model", gpu_split="[8, 8]")
    s = read_tabby_config(path)
    assert s.model_path == str(tmp_path / "models" / "my-model") and s.gpu_split is None
    assert any("ignored while gpu_split_auto is true" in n for n in s.notes)


@pytest.mark.parametrize("pair, mode", [("8,8", "q8"), ("4, 4", "q4"), ("6,6", "q6"), ("4,8", "q6"), ("2,2", "q4"),
                                        ("5,6", "q6"), ("8,7", "q8"), ("FP16", "fp16"), ("q8", "q8")])
def test_cache_modes_and_exllamav3_bit_pairs(tmp_path, pair, mode):
    assert read_tabby_config(sample_with(tmp_path, SAMPLES[-1], cache_mode=f'"{pair}"')).cache_mode == mode


def test_unknown_keys_are_reported_not_fatal(tmp_path):
    path = tmp_path / "config.yml"
    path.write_text("model:\n  model_name: m\n  max_seq_lenn: 4096\n  cpu_moe_offload_layers: 2\n"
                    "draft_model:\n  dynamic_draft: true\nfrontend:\n  x: 1\n")
    s = read_tabby_config(str(path))
    assert s.unknown_keys == ("draft_model.dynamic_draft", "frontend", "model.cpu_moe_offload_layers", "model.max_seq_lenn")
    assert "max_seq_lenn" in describe(s)


@pytest.mark.parametrize("text, says", [
    ("model:\n  model_name: [unclosed\n", "not valid YAML at line"),
    ("model:\n  max_seq_len: lots\n  model_name: m\n", "model.max_seq_len: expected a whole number"),
    ("model:\n  model_name: m\n  cache_mode: Q3\n", "cache_mode: expected FP16, Q8, Q6, Q4"),
    ("model:\n  model_name: m\n  gpu_split: [8, nan]\n", "model.gpu_split: expected a list of numbers"),
    ("model:\n  model_name: m\n  tensor_parallel: 1\n", "model.tensor_parallel: expected true or false"),
    ("- just\n- a list\n", "not a TabbyAPI config.yml"),
    ("network:\n  port: 5000\n", "not a TabbyAPI config.yml"),
])
def test_a_bad_config_is_one_line_naming_the_problem(tmp_path, text, says):
    path = tmp_path / "config.yml"
    path.write_text(text)
    with pytest.raises(UsageError, match=says.replace("[", r"\[")):
        read_tabby_config(str(path))


def test_the_cli_exits_3_on_a_bad_config(tmp_path):
    path = tmp_path / "config.yml"
    path.write_text("model:\n  model_name: m\n  cache_mode: Q3\n")
    done = run_cli("--replay", "fixtures/machines/v100-pcie-16gb-healthy.json", "--tabby-config", str(path), "--no-tui")
    assert done.returncode == 3 and "Traceback" not in done.stderr and "cache_mode" in done.stderr
    assert run_cli("--tabby-config", str(tmp_path / "nope.yml"), "--no-tui").returncode == 3


def test_watch_config_reads_a_tabby_config_with_the_same_reader(tmp_path):
    path = sample_with(tmp_path, SAMPLES[-1], model_name="qwen27b", cache_mode="Q6", max_seq_len=4096)
    facts = read_launch_config(path)
    assert facts.error == "" and facts.tabby == read_tabby_config(path)
    assert read_launch_config(str(SAMPLES[0])).tabby.unknown_keys == ()
    broken = tmp_path / "broken.yml"
    broken.write_text("model:\n  model_name: m\n  max_seq_len: lots\n")
    assert "model.max_seq_len" in read_launch_config(str(broken)).error


def test_the_known_keys_cover_tabbyapis_documented_ones():
    for key in ("model_dir", "model_name", "max_seq_len", "cache_mode", "cache_size", "gpu_split_auto", "gpu_split",
                "autosplit_reserve", "tensor_parallel", "chunk_size"):
        assert key in MODEL_KEYS
    assert {"draft_model_dir", "draft_model_name", "draft_cache_mode", "draft_gpu_split"} <= DRAFT_KEYS


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_a_plan_from_the_sample_gives_the_findings_of_the_same_flags(tmp_path, sample):
    import json

    machine = "fixtures/machines/v100-pcie-16gb-healthy.json"
    model = MODELS / "qwen2-27b-exl2-4.25bpw"
    path = sample_with(tmp_path, sample, model_dir=str(MODELS), model_name=model.name, max_seq_len=32768, cache_mode="Q4")
    from_config = run_cli("--replay", machine, "--tabby-config", path, "--json")
    from_flags = run_cli("--replay", machine, "--model", str(model), "--max-seq-len", "32768", "--cache-mode", "q4", "--json")
    assert from_config.returncode == from_flags.returncode, from_config.stderr

    def findings(done):
        doc = json.loads(done.stdout)
        plan = {k: v for k, v in doc["plan"].items() if k != "model_path_from"}  # where the path was written differs
        return plan, [(f["id"], f["status"], f["summary"]) for f in doc["findings"]]

    assert findings(from_config) == findings(from_flags)
    assert json.loads(from_config.stdout)["plan"]["model_path_from"] == "TabbyAPI's config.yml model_dir/model_name"
    assert any(f[0] == "memory-budget" for f in findings(from_config)[1])  # the model checks ran on it
