"""Model facts read from headers only: every fixture directory, damaged files, and never a write."""

from __future__ import annotations

import json
import struct

import pytest
from model_support import MODELS, V100, copy_fixture, tree_digest

from doctor.facts.modeldir.config import parse_config
from doctor.facts.modeldir.directory import gather_model
from doctor.facts.modeldir.gguf_header import read_gguf
from doctor.facts.modeldir.safetensors_header import HeaderError, read_header
from doctor.model.facts import Facts
from doctor.model.model_dir import ModelFacts
from doctor.model.serialize import from_jsonable, to_jsonable

# fixture -> (quant method, tensor format, extra expectations on the facts)
EXPECTED = {
    "tiny-fp16": ("fp16", "unquantized", {}),
    "tiny-bf16": ("bf16", "unquantized", {}),
    "tiny-exl2": ("exl2", "exl2", {"bits": 4.0, "head_bits": 6.0}),
    "qwen27b exl2": ("exl2", "exl2", {"bits": 4.0}),
    "tiny-gptq": ("gptq", "gptq", {"bits": 4.0, "group_size": 16, "desc_act": False, "act_order_in_tensors": False}),
    "tiny-gptq-desc-act": ("gptq", "gptq", {"desc_act": True, "act_order_in_tensors": True, "declared_in": "quantize_config.json"}),
    "tiny-awq": ("awq", "gptq", {"awq_version": "gemm", "disagreement": ""}),
    "tiny-bnb-nf4": ("bnb-4bit", "unquantized", {"bnb_quant_type": "nf4", "compute_dtype": "bfloat16"}),
    "tiny-gguf": ("gguf", "none", {}),
    "tiny-sharded": ("fp16", "unquantized", {}),
    "qwen2-27b-exl2-3.75bpw": ("exl2", "none", {"bits": 3.75, "head_bits": 6.0}),
    "qwen2.5-32b-instruct": ("bf16", "none", {"declared_in": "config.json torch_dtype"}),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_quantization_of_each_fixture(name):
    method, fmt, extra = EXPECTED[name]
    m = gather_model(str(MODELS / name))
    assert m.exists and m.kind == "directory" and not m.problem
    assert (m.quant.method, m.quant.tensor_format) == (method, fmt)
    for key, value in extra.items():
        assert getattr(m.quant, key) == value, key


def test_sharded_model_sums_both_shards_and_finds_every_layer():
    m = gather_model(str(MODELS / "tiny-sharded"))
    single = gather_model(str(MODELS / "tiny-fp16"))
    assert len(m.weights.shards) == 2 and not m.weights.problems
    assert m.weights.total_bytes == single.weights.total_bytes
    assert m.weights.layer_bytes == single.weights.layer_bytes and len(m.weights.layer_bytes) == 2


def test_missing_shard_is_reported(tmp_path):
    d = copy_fixture("tiny-sharded", tmp_path / "m")
    (d / "model-00002-of-00002.safetensors").unlink()
    m = gather_model(str(d))
    assert m.weights.index_missing == ("model-00002-of-00002.safetensors",)
    assert any("incomplete download" in p for p in m.weights.problems)


def test_truncated_safetensors_is_detected_with_the_missing_bytes():
    m = gather_model(str(MODELS / "tiny-truncated"))
    (problem,) = m.weights.problems
    assert "truncated" in problem and "4,096 bytes missing" in problem


def test_lying_header_is_detected(tmp_path):
    p = tmp_path / "model.safetensors"
    header = json.dumps({"w": {"dtype": "F16", "shape": [4, 4], "data_offsets": [0, 16]}}).encode()
    p.write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 16)
    assert "header lies" in read_header(p).problem  # F16[4,4] is 32 bytes, offsets say 16


@pytest.mark.parametrize("blob, words", [
    (b"\x01\x02", "too short"),
    (struct.pack("<Q", 10 ** 12) + b"{}", "over the 100 MB limit"),
    (struct.pack("<Q", 500) + b"{}", "truncated download"),
    (struct.pack("<Q", 4) + b"nope", "not valid JSON"),
])
def test_unreadable_headers_raise_a_clear_error(tmp_path, blob, words):
    p = tmp_path / "x.safetensors"
    p.write_bytes(blob)
    with pytest.raises(HeaderError, match=words):
        read_header(p)


def test_malformed_config_is_a_problem_not_a_crash():
    m = gather_model(str(MODELS / "tiny-malformed-config"))
    assert m.config is None and "broken JSON at line" in m.config_problem
    assert m.weights is not None and not m.weights.problems


def test_gguf_header():
    g = read_gguf(next((MODELS / "tiny-gguf").glob("*.gguf")))
    assert (g.version, g.tensor_count, g.architecture, g.name, g.file_type, g.problem) == (3, 0, "qwen2", "Tiny Qwen2 Instruct", "Q4_K_M", "")


def test_truncated_gguf_says_so(tmp_path):
    src = next((MODELS / "tiny-gguf").glob("*.gguf")).read_bytes()
    p = tmp_path / "cut.gguf"
    p.write_bytes(src[:60])
    g = read_gguf(p)
    assert "truncated" in g.problem and g.version == 3


def test_published_configs_parse_with_their_real_shapes():
    gemma = gather_model(str(MODELS / "gemma-3-27b-it")).config
    assert (gemma.num_hidden_layers, gemma.hidden_size, gemma.num_key_value_heads, gemma.head_dim) == (62, 5376, 16, 128)
    assert gemma.vocab_size == 262208 and gemma.tie_word_embeddings is True  # transformers' Gemma3 defaults
    assert gemma.sliding_window == 1024 and gemma.sliding_layers == 62 - 62 // 6
    qwen3 = gather_model(str(MODELS / "qwen3-32b")).config
    assert (qwen3.num_attention_heads, qwen3.intermediate_size, qwen3.sliding_layers) == (64, 25600, 0)
    qwen25 = gather_model(str(MODELS / "qwen2.5-32b-instruct")).config
    assert qwen25.kv_width == 1024 and qwen25.max_position_embeddings == 32768 and qwen25.sliding_layers == 0


def test_head_dim_and_kv_heads_default_like_transformers():
    c = parse_config({"hidden_size": 4096, "num_attention_heads": 32, "num_hidden_layers": 2})
    assert (c.head_dim, c.num_key_value_heads) == (128, 32)


def test_missing_path_and_plain_file():
    assert gather_model("/nonexistent/model").kind == "missing"
    m = gather_model(str(MODELS / "make_models.py"))
    assert m.kind == "file" and "not a model directory" in m.problem


def test_reading_never_modifies_the_directory(tmp_path):
    for name in ("tiny-gptq-desc-act", "tiny-truncated", "tiny-malformed-config", "tiny-sharded", "tiny-gguf"):
        d = copy_fixture(name, tmp_path / name)
        before = tree_digest(d)
        gather_model(str(d))
        assert tree_digest(d) == before, name
        assert sorted(p.name for p in d.iterdir()) == sorted(p.name for p in (MODELS / name).iterdir())


def test_only_headers_are_read():
    m = gather_model(str(MODELS / "tiny-gptq-desc-act"))
    total = sum(s.file_bytes for s in m.weights.shards)
    assert 0 < m.bytes_read < total / 2  # headers + one g_idx tensor, not the weights


def test_model_facts_survive_a_json_round_trip():
    from dataclasses import replace

    for name in ("tiny-gptq-desc-act", "tiny-gguf", "gemma-3-27b-it", "tiny-truncated"):
        facts = replace(V100, model=gather_model(str(MODELS / name)))
        back = from_jsonable(Facts, json.loads(json.dumps(to_jsonable(facts))))
        assert back.model == facts.model and isinstance(back.model, ModelFacts), name
