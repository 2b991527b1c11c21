"""The layer replicator on tiny tensors: names, bytes, order and config of the deep model it writes."""

from __future__ import annotations

import json
import os
import struct

import pytest

from doctor.probe.replicate_layers import main, replicate, source_tensors
from doctor.probe.safetensors_writer import ITEMSIZE, TensorEntry, write_safetensors


def _bytes_of(tag: bytes):
    return lambda fh, n: fh.write((tag * n)[:n])


def _source(tmp_path, layers=2):
    src = tmp_path / "converted"
    src.mkdir()
    entries = [TensorEntry("model.embed_tokens.weight", "F16", (4, 3), _bytes_of(b"E"))]
    for i in range(layers):
        p = f"model.layers.{i}."
        entries += [TensorEntry(p + "input_layernorm.weight", "F16", (3,), _bytes_of(b"n%d" % i)),
                    TensorEntry(p + "self_attn.q_proj.q_perm", "I16", (3,), _bytes_of(b"p%d" % i)),  # odd: 6 bytes
                    TensorEntry(p + "self_attn.q_proj.q_weight", "I32", (2, 3), _bytes_of(b"w%d" % i))]
    entries.append(TensorEntry("lm_head.weight", "F16", (4, 3), _bytes_of(b"H")))
    write_safetensors(str(src / "output.safetensors"), entries, {"format": "pt"})
    (src / "config.json").write_text(json.dumps({"num_hidden_layers": layers, "quantization_config": {"bits": 4.0}}))
    (src / "tokenizer.json").write_text("{}")
    (src / "synthetic.json").write_text('{"label": "the 2-layer source"}')
    return src


def _data(path):
    with open(path, "rb") as fh:
        raw = fh.read()
    return {t.name: (t, raw[t.start:t.start + t.nbytes]) for t in source_tensors(str(path))[1]}


@pytest.mark.parametrize("kernel_copy", [True, False])
def test_layers_are_repeated_under_new_indices(tmp_path, monkeypatch, kernel_copy):
    if not kernel_copy:  # the buffered copy, as on systems without copy_file_range
        monkeypatch.delattr(os, "copy_file_range", raising=False)
    src = _source(tmp_path)
    info = replicate(str(src), str(tmp_path / "deep"), 5)
    out = _data(tmp_path / "deep" / "model.safetensors")
    source = _data(src / "output.safetensors")
    assert len(out) == 2 + 5 * 3
    for j in range(5):
        for rest in ("input_layernorm.weight", "self_attn.q_proj.q_perm", "self_attn.q_proj.q_weight"):
            t, data = out[f"model.layers.{j}.{rest}"]
            st, sdata = source[f"model.layers.{j % 2}.{rest}"]
            assert data == sdata and (t.dtype, t.shape) == (st.dtype, st.shape)
    assert out["lm_head.weight"][1] == source["lm_head.weight"][1]
    assert info == {"layers": 5, "source_layers": 2, "file_bytes": 24 + 24 + 5 * (6 + 6 + 24), "layer_bytes": 36}
    cfg = json.loads((tmp_path / "deep" / "config.json").read_text())
    assert cfg == {"num_hidden_layers": 5, "quantization_config": {"bits": 4.0}}
    assert (tmp_path / "deep" / "tokenizer.json").exists()
    assert not (tmp_path / "deep" / "synthetic.json").exists()  # the source's label would misname the deep model


def test_every_tensor_starts_at_a_multiple_of_its_element_size(tmp_path):
    replicate(str(_source(tmp_path)), str(tmp_path / "deep"), 3)
    with open(tmp_path / "deep" / "model.safetensors", "rb") as fh:
        (size,) = struct.unpack("<Q", fh.read(8))
    assert size % 8 == 0
    for t, _ in _data(tmp_path / "deep" / "model.safetensors").values():
        assert (t.start - 8 - size) % ITEMSIZE[t.dtype] == 0, t.name


def test_one_source_layer_fills_all(tmp_path):
    info = replicate(str(_source(tmp_path, layers=1)), str(tmp_path / "deep"), 4)
    out = _data(tmp_path / "deep" / "model.safetensors")
    assert info["source_layers"] == 1
    assert {out[f"model.layers.{j}.self_attn.q_proj.q_weight"][1] for j in range(4)} == {b"w0w0w0w0w0w0w0w0w0w0w0w0"}


def test_bad_sources_are_errors_not_tracebacks(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["--src", str(empty), "--out", str(tmp_path / "o"), "--layers", "4"]) == 3
    assert "no .safetensors files" in capsys.readouterr().err
    flat = tmp_path / "flat"
    flat.mkdir()
    write_safetensors(str(flat / "m.safetensors"), [TensorEntry("lm_head.weight", "F16", (2,), _bytes_of(b"H"))])
    (flat / "config.json").write_text("{}")
    with pytest.raises(ValueError, match="nothing to replicate"):
        replicate(str(flat), str(tmp_path / "o2"), 4)


def test_main_writes_the_label(tmp_path, capsys):
    src = _source(tmp_path)
    assert main(["--src", str(src), "--out", str(tmp_path / "deep"), "--layers", "6",
                 "--label", "synthetic exl2 ({layers} layers from {source_layers}, {gb:.6f} GB)"]) == 0
    meta = json.loads((tmp_path / "deep" / "synthetic.json").read_text())
    assert meta["label"] == f"synthetic exl2 (6 layers from 2, {meta['file_bytes'] / 1e9:.6f} GB)"
    assert json.loads(capsys.readouterr().out)["layers"] == 6
