"""Finding a model's quantized versions: on a local Hub (EXL2 branches, GGUF files incl. a split one, GPTQ, AWQ),
from the cache when offline, and from a local folder."""

from __future__ import annotations

import json

import pytest
from conftest import ROOT
from gguf_support import write_gguf
from hub_support import cache_with
from plan_hub_support import plan_hub

from doctor.facts.hub.quants import bpw_of, discover, fmt_of, gguf_type_of
from doctor.model.errors import UsageError

STORY = json.loads((ROOT / "fixtures/plans/story-qwen-27b-hub.json").read_text())


@pytest.mark.parametrize("branch, bpw", [("3.75bpw", 3.75), ("4_25", 4.25), ("6.0bpw", 6.0), ("main", None),
                                         ("measurement", None), ("8.0", 8.0)])
def test_bpw_from_branch_names(branch, bpw):
    assert bpw_of(branch) == bpw


@pytest.mark.parametrize("name, kind", [("Qwen-27B-Q4_K_M.gguf", "Q4_K_M"), ("x.Q8_0-00001-of-00002.gguf", "Q8_0"),
                                        ("model-IQ4_XS.gguf", "IQ4_XS"), ("m-f16.gguf", "F16"), ("README.md", None)])
def test_gguf_type_from_file_names(name, kind):
    assert gguf_type_of(name) == kind


def test_format_from_tags_then_name():
    assert fmt_of("a/b", ["gguf"]) == "gguf" and fmt_of("a/b-exl2", []) == "exl2" and fmt_of("a/b", []) is None


def run_in_child(*args: str, env: dict):
    from conftest import run_cli

    return run_cli("plan", *args, env=env, timeout=120)


def test_a_base_model_lists_every_version_on_the_hub(tmp_path):
    with plan_hub(STORY) as (url, asked):
        done = run_in_child("story/Qwen-27B-Instruct", "--json",
                            env={"HF_ENDPOINT": url, "HF_HUB_CACHE": str(tmp_path / "c"), "HF_HUB_OFFLINE": "0"})
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    labels = {r["option"]["label"]: r["option"] for r in doc["rows"]}
    assert {"EXL2 3.75 bpw", "EXL2 4.25 bpw", "GGUF Q3_K_M", "GGUF Q4_K_M", "GGUF Q5_K_M", "GGUF Q8_0",
            "GPTQ 4-bit"} <= set(labels)
    assert labels["EXL2 3.75 bpw"]["download_bytes"] == 12_730_000_000 and labels["EXL2 3.75 bpw"]["revision"] == "3.75bpw"
    q8 = labels["GGUF Q8_0"]
    assert q8["download_bytes"] == 28_700_000_000 and q8["filename"].endswith("-00001-of-00002.gguf")
    assert any("vLLM does not run AWQ" in n and "cc 7.0" in n for n in doc["notes"])  # AWQ kernels start at cc 7.5
    assert not any("/resolve/" in p and p.endswith(".safetensors") for p in asked)  # no weights fetched
    assert "versions listed by the Hub" in done.stderr


def test_a_quantized_repo_lists_its_other_branches(tmp_path):
    with plan_hub(STORY) as (url, _):
        done = run_in_child("quanter/Qwen-27B-Instruct-exl2@4.25bpw", "--json",
                            env={"HF_ENDPOINT": url, "HF_HUB_CACHE": str(tmp_path / "c"), "HF_HUB_OFFLINE": "0"})
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert {r["option"]["revision"] for r in doc["rows"]} == {"3.75bpw", "4.25bpw"}
    q8 = next(r for r in doc["rows"] if r["option"]["gguf_type"] is None and r["option"]["revision"] == "3.75bpw")
    assert "--revision 3.75bpw" in q8["commands"]["download"]


def test_a_split_gguf_downloads_every_part(tmp_path):
    with plan_hub(STORY) as (url, _):
        done = run_in_child("story/Qwen-27B-Instruct", "--json", "--engine", "llama.cpp", "--target-gpu", "p40",
                            env={"HF_ENDPOINT": url, "HF_HUB_CACHE": str(tmp_path / "c"), "HF_HUB_OFFLINE": "0"})
    q8 = next(r for r in json.loads(done.stdout)["rows"] if r["option"]["gguf_type"] == "Q8_0")
    assert q8["commands"]["download"] == ("hf download gguffer/Qwen-27B-Instruct-GGUF --include "
                                          "'Qwen-27B-Instruct-Q8_0-*-of-*.gguf' --local-dir models/Qwen-27B-Instruct-GGUF")
    assert q8["commands"]["run"].startswith(f"llama-server -m models/Qwen-27B-Instruct-GGUF/{q8['option']['filename']} ")


def test_offline_the_cache_stands_in(tmp_path):
    cache = tmp_path / "hub"
    for repo, branch in (("story/Qwen-27B-Instruct", "main"), ("quanter/Qwen-27B-Instruct-exl2", "3.75bpw")):
        folder = tmp_path / repo.replace("/", "_")
        folder.mkdir()
        for name, value in STORY[repo]["branches"][branch].items():
            (folder / name).write_text(json.dumps(value)) if isinstance(value, dict) else (folder / name).write_bytes(b"x")
        cache_with(cache, repo, folder, revision=branch)
    done = run_in_child("story/Qwen-27B-Instruct", "--json", env={"HF_HUB_CACHE": str(cache), "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    found = {(r["option"]["label"], r["option"]["found"], r["option"]["revision"]) for r in doc["rows"]}
    assert ("EXL2 3.75 bpw", "cache", "3.75bpw") in found and "cache only" in doc["model_source"]


def test_offline_without_the_config_is_one_line_exit_3(tmp_path):
    done = run_in_child("story/Qwen-27B-Instruct", env={"HF_HUB_CACHE": str(tmp_path), "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 3 and done.stderr.count("\n") == 1 and "HF_HUB_OFFLINE" in done.stderr


def test_a_local_folder_plans_its_own_version():
    found = discover(str(ROOT / "fixtures/models/qwen2-27b-exl2-3.75bpw"))
    assert [(c.label, c.found) for c in found.candidates] == [("EXL2 3.75 bpw", "config")]


def test_not_a_model():
    with pytest.raises(UsageError, match="neither a local folder"):
        discover("no such thing here")


def test_a_gguf_file_plans_its_own_version_from_the_header(tmp_path):
    """A .gguf on disk (downloaded, or the device runs' synthetic ones): shape and version from its header alone."""
    path = write_gguf(tmp_path / "synth.gguf", layers=4, hidden=512, ff=1536, vocab=4096, heads=8, kv_heads=2,
                      head_dim=64)
    found = discover(str(path))
    (own,) = found.candidates
    assert (own.fmt, own.label, own.gguf_type, own.found, own.filename) == ("gguf", "GGUF Q4_K_M", "Q4_K_M", "local",
                                                                           str(path))
    assert own.download_bytes and own.download_bytes > path.stat().st_size  # the tensors' bytes, not the header's
    c = found.config
    assert (c.num_hidden_layers, c.hidden_size, c.intermediate_size, c.num_attention_heads, c.num_key_value_heads,
            c.head_dim, c.vocab_size, c.max_position_embeddings) == (4, 512, 1536, 8, 2, 64, 4096, 32768)


def test_a_damaged_gguf_is_one_line(tmp_path):
    path = tmp_path / "cut.gguf"
    path.write_bytes(write_gguf(tmp_path / "whole.gguf").read_bytes()[:200])
    with pytest.raises(UsageError, match="cut.gguf: the GGUF header (lies|ends early)"):
        discover(str(path))
