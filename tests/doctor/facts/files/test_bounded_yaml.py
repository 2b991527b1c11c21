"""YAML with limits: a billion laughs, deep nesting and recursive aliases are refused fast, in one line that does
not print the expanded value; a real config loads as yaml.safe_load loads it."""

import time

import pytest
import yaml

from doctor.facts.files import bounded_yaml
from doctor.facts.files.bounded_yaml import YamlLimit


def billion_laughs() -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
    return "\n".join(lines) + "\nmodel: {model_dir: *a9}\n"


@pytest.mark.parametrize("text, words", [
    (billion_laughs(), "expand to more than"),
    ("model: " + "[" * 20_000 + "]" * 20_000, "nested more than 64 levels deep"),
    ("model: &a [*a]", "recursive alias"),
    ("x: &x 1\n" + "".join(f"k{i}: *x\n" for i in range(2_000)), "more than 1,000 aliases"),
])
def test_a_hostile_document_is_refused_fast_without_its_value(text, words):
    t0 = time.monotonic()
    with pytest.raises(YamlLimit) as refused:
        bounded_yaml.load(text)
    assert time.monotonic() - t0 < 5
    assert words in refused.value.problem and "lol" not in str(refused.value)


def test_a_real_config_loads_as_safe_load_does():
    text = "model:\n  model_dir: models\n  model_name: Qwen-27B-exl2\n  max_seq_len: 16384\n  gpu_split: [12, 16]\n" \
           "defaults: &d {cache_mode: Q4}\ndraft_model: *d\n"
    assert bounded_yaml.load(text) == yaml.safe_load(text)
    assert bounded_yaml.load("") is None
