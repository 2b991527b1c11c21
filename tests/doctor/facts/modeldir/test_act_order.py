"""Act-order from a GPTQ g_idx, decided once, for the model-directory facts and the probe alike."""

import json
import struct

import pytest

from doctor.facts.modeldir.act_order import act_order_in, is_act_order
from doctor.model.unknown import Unknown


@pytest.mark.parametrize("g_idx, act", [([0, 0, 1, 1, 2], False), ([0, 1, 0, 1], True), ([], False), ([3], False),
                                        ([0, 0, 0, 2, 1], True)])
def test_is_act_order(g_idx, act):
    assert is_act_order(g_idx) is act


def write_shard(path, tensors):
    """A minimal safetensors file of I32 tensors."""
    header, data = {}, b""
    for name, values in tensors.items():
        raw = struct.pack(f"<{len(values)}i", *values)
        header[name] = {"dtype": "I32", "shape": [len(values)], "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + data)


def test_act_order_in_reads_the_shard_that_holds_it(tmp_path):
    write_shard(tmp_path / "model-00001.safetensors", {"a.g_idx": [0, 0, 1, 1]})
    write_shard(tmp_path / "model-00002.safetensors", {"b.g_idx": [1, 0, 1, 0]})
    assert act_order_in(tmp_path, "a.g_idx") is False
    assert act_order_in(tmp_path, "b.g_idx") is True
    assert isinstance(act_order_in(tmp_path, "c.g_idx"), Unknown)


def test_the_model_dir_facts_and_the_probe_agree(tmp_path):
    from doctor.facts.modeldir.directory import gather_model
    from doctor.probe.worker import _act_order

    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llama", "quantization_config": {
        "quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": True}}))
    write_shard(tmp_path / "model.safetensors", {"model.layers.0.mlp.down_proj.g_idx": [2, 0, 1, 0]})
    facts = gather_model(str(tmp_path)).quant.act_order_in_tensors
    assert facts is True
    assert _act_order(str(tmp_path), ["model.layers.0.mlp.down_proj.g_idx"]) is True
    assert _act_order(str(tmp_path), ["model.layers.0.mlp.down_proj.qweight"]) is False
