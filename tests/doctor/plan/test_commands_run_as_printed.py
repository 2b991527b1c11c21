"""Every command of every row, for every fixture model, on one card, a split and with a draft model: shell lines parse
(shlex), YAML files parse (yaml), nothing is left for the user to fill in, the file a download writes is the file the
run step loads, the context a row is planned for is the context its launch sets, and the Markdown puts each step in a
code block of its own language (issue 37, item 5)."""

from __future__ import annotations

import json
import re
import shlex

import pytest
import yaml
from conftest import ROOT

from doctor.facts import catalogue
from doctor.facts.hub.quants import discover
from doctor.knowledge.gpus import spec_for_key
from doctor.model.quant_plan import PlanRow, QuantCandidate, step_language
from doctor.plan.build import build_plan
from doctor.plan.rows import planned_engines
from doctor.render.plan_markdown import render_plan_markdown

MODELS = sorted(p.name for p in (ROOT / "fixtures/models").iterdir() if (p / "config.json").is_file()
                and "malformed" not in p.name and "truncated" not in p.name)
CATALOGUED = ("Qwen/Qwen2.5-32B-Instruct", "Qwen/Qwen3-8B", "meta-llama/Llama-3.2-1B-Instruct")
PLACEHOLDER = re.compile(r"the base model|<[A-Za-z_ ]+>|\bORG/NAME\b|\bPATH\b|\.\.\.")
HUB = (QuantCandidate("exl2", "EXL2 4 bpw", "someone/Model-exl2", revision="4.0bpw", bpw=4.0),
       QuantCandidate("gguf", "GGUF Q4_K_M", "someone/Model-GGUF", filename="Model-Q4_K_M.gguf", gguf_type="Q4_K_M"),
       QuantCandidate("gguf", "GGUF Q8_0", "someone/Model-GGUF", filename="Q8_0/Model-Q8_0-00001-of-00002.gguf",
                      gguf_type="Q8_0"),
       QuantCandidate("gptq", "GPTQ 4-bit", "someone/Model-GPTQ", bpw=4.0, group_size=128))
CARD_SETS = (("v100-pcie-16gb",), ("p40",), ("v100-pcie-16gb", "t4"))


def plans():
    """(name, plan) for each fixture model as discovered, as if the Hub had listed HUB for it, and each catalogued one."""
    for name in MODELS:
        found = discover(str(ROOT / "fixtures/models" / name))
        for keys in CARD_SETS:
            cards = tuple(spec_for_key(k) for k in keys)
            yield f"{name}/{'+'.join(keys)}", build_plan(name, found.how, found.config, found.candidates, cards, 4096)
            yield (f"{name}/{'+'.join(keys)}/hub", build_plan(name, "test", found.config, HUB, cards, 4096,
                                                              base_repo="someone/Model",
                                                              draft_name="someone/Small", draft_bytes=1 << 28))
    for repo in CATALOGUED:
        entry = catalogue.lookup(repo)
        assert entry is not None
        found = discover(repo)
        yield repo, build_plan(repo, found.how, found.config, found.candidates, (spec_for_key("v100-pcie-16gb"),),
                               8192, base_repo=found.base_repo)


PLANS = list(plans())


def test_every_engine_that_plans_has_rows_somewhere():
    engines = {r.engine for _, p in PLANS for r in p.rows}
    assert engines >= {str(e.id) for e in planned_engines()}, engines


def shell_words(text: str) -> list[str]:
    words = shlex.split(text, comments=True)
    assert text.lstrip().startswith("#") or words, text
    return words


def flag(words: list[str], name: str) -> str | None:
    return words[words.index(name) + 1] if name in words else None


def local_dirs(text: str) -> list[str]:
    """Every `--local-dir X` and `-cf X` of a step (where its files land)."""
    words = shell_words(text)
    return [words[i + 1] for i, w in enumerate(words) if w in ("--local-dir", "-cf", "--outfile") and i + 1 < len(words)]


def check_row(r: PlanRow) -> None:
    assert r.commands and "download" in r.commands or "serve" in r.commands, r.commands
    for step, text in r.commands.items():
        assert not PLACEHOLDER.search(text.split("#")[0] if step_language(step) == "sh" else text), (step, text)
        if step_language(step) == "yaml":
            data = yaml.safe_load(text)
            assert data["model"]["max_seq_len"] == r.context
        else:
            assert "\n" not in text.strip(), (step, text)
            shell_words(text)
    written = [d for step, text in r.commands.items() if step_language(step) == "sh" for d in local_dirs(text)]
    run = r.commands.get("run", "")
    words = shell_words(run) if run else []
    if "llama-server" in words:
        assert flag(words, "-c") == str(r.context)
        model = flag(words, "-m") or ""
        assert any(d in model for d in written) or "already on disk" in r.commands.get("download", ""), (model, written)
        if "-md" in words:
            assert any(flag(words, "-md") == d for d in written), (words, written)
    if "ollama" in words:
        assert f"OLLAMA_CONTEXT_LENGTH={r.context}" in r.commands["serve"]
        tag = words[-1]
        assert r.commands["download"] == f"ollama pull {tag}"
        if r.cache != "f16":
            assert f"OLLAMA_KV_CACHE_TYPE={r.cache}" in r.commands["serve"]
            assert "OLLAMA_FLASH_ATTENTION=1" in r.commands["serve"]
    if "vllm" in words:
        assert flag(words, "--max-model-len") == str(r.context)
        assert words[2] in shell_words(r.commands["download"]), (words, r.commands["download"])
    if "config" in r.commands:  # TabbyAPI: the folder the download (or the converter) wrote is the model it loads
        model = yaml.safe_load(r.commands["config"])["model"]
        assert f"tabbyAPI/{model['model_dir']}/{model['model_name']}" in written or "ln -s" in r.commands["download"], \
            (model, written)
    if "python" in words and "-c" in words:  # Transformers: the script loads the folder the download wrote
        script = words[words.index("-c") + 1]
        assert any(f"p = '{d}'" in script for d in written), (script, written)


@pytest.mark.parametrize("name, plan", PLANS, ids=[n for n, _ in PLANS])
def test_every_command_runs_as_printed(name, plan):
    for r in plan.rows:
        check_row(r)


@pytest.mark.parametrize("name, plan", PLANS[:6] + PLANS[-3:], ids=[n for n, _ in PLANS[:6] + PLANS[-3:]])
def test_markdown_puts_each_step_in_a_block_of_its_language(name, plan):
    text = render_plan_markdown(plan)
    blocks = re.findall(r"```(\w*)\n(.*?)\n```", text, flags=re.S)
    assert blocks or not any(a.row for a in plan.answers)
    for lang, body in blocks:
        assert lang in ("sh", "yaml"), lang
        if lang == "yaml":
            assert isinstance(yaml.safe_load(body), dict)
        else:
            assert "\n" not in body and shlex.split(body, comments=True) is not None


def test_a_converted_gguf_is_the_file_the_server_loads():
    found = discover(str(ROOT / "fixtures/models/qwen3-32b"))
    p = build_plan("qwen3-32b", "test", found.config, (), (spec_for_key("v100-pcie-16gb"),), 4096, base_repo="Qwen/Qwen3-32B")
    check_row(next(r for r in p.rows if r.engine == "exllamav2"))
    r = next(r for r in p.rows if r.engine == "llama.cpp" and r.option.found == "convert")
    out = shell_words(r.commands["quantize"])[2]
    assert flag(shell_words(r.commands["run"]), "-m") == out
    assert json.dumps(r.commands).count(out) == 2


def test_vllm_on_a_v100_names_the_last_release_with_its_kernels():
    p = next(p for n, p in PLANS if n.endswith("v100-pcie-16gb/hub"))
    vllm = [r for r in p.rows if r.engine == "vllm"]
    assert vllm and all("pip install 'vllm<0.20'" in r.commands["download"] for r in vllm)
    assert any("vLLM on v100-pcie-16gb: vLLM 0.19.x" in n for n in p.notes)
    assert not any(r.engine == "vllm" for n, p40 in PLANS if n.endswith("p40/hub") for r in p40.rows)  # none for Pascal
