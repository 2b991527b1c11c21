"""The embedded model catalogue: every entry is a config.json the doctor parses into a model shape, with a source and
a date; lookups resolve a Hub id whatever its case; `plan` answers from it without the Hub or its cache."""

from __future__ import annotations

import json
import re

import pytest
from conftest import run_cli

from doctor.facts import catalogue
from doctor.facts.catalogue.load import FORMAT
from doctor.knowledge.arithmetic.model_bytes import ArithmeticUnavailable, dims

# Shapes the arithmetic does not model yet (issue 37 item 1: mixture-of-experts configs that name only
# moe_intermediate_size, hybrids without a dense FFN size). The test fails when one starts to parse: then strike it.
NOT_MODELLED = {"Qwen/Qwen3.6-35B-A3B", "Qwen/Qwen3.5-35B-A3B", "Qwen/Qwen3.5-122B-A10B", "Qwen/Qwen3.5-397B-A17B",
                "Qwen/Qwen3.8-2.4T-A95B", "deepseek-ai/DeepSeek-V4-Flash", "deepseek-ai/DeepSeek-V4-Pro",
                "nvidia/Llama-3_3-Nemotron-Super-49B-v1", "nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16",
                # Nemotron-H's hybrid_override_pattern (Mamba, attention and MoE layers): its MoE layers are not counted
                "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "nvidia/Nemotron-3-Nano"}
DATE = re.compile(r"^20\d\d-\d\d-\d\d$")


def test_the_file_is_the_catalogue_format_with_its_sources():
    data = json.loads(catalogue.CATALOGUE_FILE.read_text())
    assert data["format"] == FORMAT and DATE.match(data["version"])
    assert all(s["url"].startswith("https://") and s["licence"] for s in data["sources"])
    repos = [e["repo"] for e in data["entries"]]
    assert len(repos) == len({r.lower() for r in repos}), "one entry per Hub id"


@pytest.mark.parametrize("entry", catalogue.entries(), ids=lambda e: e.repo)
def test_every_entry_parses_into_a_model_shape(entry):
    assert re.fullmatch(r"[\w.-]+/[\w.-]+", entry.repo)
    assert entry.source.startswith("https://") and DATE.match(entry.checked)
    config = catalogue.model_config(entry)
    if entry.repo in NOT_MODELLED:
        with pytest.raises(ArithmeticUnavailable):
            dims(config)
        return
    for field in ("num_hidden_layers", "hidden_size", "num_attention_heads", "vocab_size"):
        assert isinstance(getattr(config, field), int), f"{entry.repo}: {field} unknown"
    d = dims(config)
    assert d.layers > 0 and d.hidden > 0 and d.intermediate > 0 and d.kv_heads > 0 and d.head_dim > 0
    assert (entry.ollama is None) == (entry.ollama_source is None)
    for q in entry.quants:
        assert q.fmt in ("gguf", "exl2", "gptq", "awq") and q.repo and q.source and DATE.match(q.checked)
        assert q.bytes is None or q.bytes > 0
        assert (q.gguf_type is not None) == (q.fmt == "gguf")


def test_lookup_ignores_case_and_builds_only_what_is_asked():
    first = catalogue.entries()[0]
    assert catalogue.lookup(first.repo.upper()) == first
    assert catalogue.lookup("no-such-org/no-such-model") is None
    assert catalogue.lookup(first.repo + "@main") is None  # a revision is the Hub's, not the catalogue's


def test_candidates_are_the_catalogued_versions():
    entry = next(e for e in catalogue.entries() if e.quants)
    cands = catalogue.candidates(entry)
    assert [c.label for c in cands] == [q.label for q in entry.quants]
    assert all(c.found == "catalogue" and c.repo for c in cands)


def test_plan_answers_from_the_catalogue_offline_and_says_so(tmp_path):
    done = run_cli("plan", "Qwen/Qwen3-8B", "--no-tui", env={"HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(tmp_path)})
    assert done.returncode in (0, 1), done.stderr
    assert "embedded catalogue" in done.stderr and "the Hub was not asked" in done.stderr
    assert done.stdout.startswith("Plan for Qwen/Qwen3-8B (36 layers, hidden 4096")


def test_a_model_in_neither_catalogue_nor_cache_fails_offline_with_the_config_command(tmp_path):
    done = run_cli("plan", "no-such-org/no-such-model", "--no-tui",
                   env={"HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(tmp_path)})
    assert done.returncode == 3
    assert "hf download no-such-org/no-such-model config.json" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_ollama_name_finds_its_model():
    entry = catalogue.lookup("qwen2.5:32b")
    assert entry is not None and entry.ollama == "qwen2.5:32b" and entry.ollama_source
    assert entry.repo == "Qwen/Qwen2.5-32B-Instruct"  # the most downloaded of the entries with that name
