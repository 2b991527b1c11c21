"""`v100-doctor probe --synthetic --compare-engines` from ExLlamaV2's and Ollama's side (doctor/commands/probe_transformers.py),
and --compare-engines on a user's GGUF refused. The Transformers probe itself, a stage of the one Run, is tested in
tests/doctor/run/test_engine_probes.py."""

from __future__ import annotations

import json

import pytest
from conftest import ROOT, run_cli


def _compare(monkeypatch, capsys, engine, measurements, as_json=False):
    import argparse

    from doctor.commands import probe_transformers
    from doctor.knowledge.gpus import spec_for_name
    from doctor.model.ids import Engine
    from doctor.model.plan import Plan

    monkeypatch.setattr(probe_transformers, "measure_same_shape",
                        lambda *a, **k: {"shape": None, "transformers": None, "measurements": measurements})
    monkeypatch.setattr(probe_transformers, "card", lambda index: (spec_for_name("Tesla V100-PCIE-16GB", 16384), "7.0"))
    args = argparse.Namespace(prompt_tokens=128, warmup=256, tokens=128, runs=3, synthetic_layers=16,
                              keep_synthetic=None, json=as_json, no_redact=True)
    code = probe_transformers.run_compare(args, Plan(engine=Engine(engine)))
    return code, capsys.readouterr().out


def test_compare_from_llama_cpps_side_on_the_same_shape(monkeypatch, capsys):
    from doctor.model.engine_probe import EngineMeasurement as M

    got = [M("transformers", "bitsandbytes NF4", "ok", 9.0, 3_600_000_000, "synthetic"),
           M("llama.cpp", "Q4_K_M GGUF", "ok", 40.0, 3_900_000_000, "synthetic"),
           M("exllamav2", "4-bit GPTQ", "ok", 52.0, 3_500_000_000, "synthetic")]
    code, out = _compare(monkeypatch, capsys, "ollama", got)  # Ollama runs llama.cpp: its side of the gap
    assert code == 0 and "llama.cpp (Q4_K_M GGUF): ok, 40 tok/s, 3.90 GB read per token" in out
    assert "other engines here: exllamav2 would decode x1.3 faster here (52 vs 40 tok/s, measured)" in out
    assert "transformers 9 tok/s measured" in out


def test_compare_when_the_plans_engine_is_not_installed(monkeypatch, capsys):
    from doctor.model.engine_probe import EngineMeasurement as M

    code, out = _compare(monkeypatch, capsys, "exllamav2",
                         [M("transformers", "bitsandbytes NF4", "ok", 9.0, 3_600_000_000, "synthetic")])
    assert code == 3 and "exllamav2 could not be measured here" in out


def test_compare_engines_for_llama_cpp_needs_the_synthetic_model(tmp_path):
    from gguf_support import write_gguf

    proc = run_cli("probe", "--model", str(write_gguf(tmp_path / "m.gguf")), "--compare-engines")
    assert proc.returncode == 3 and "--compare-engines with this engine needs --synthetic" in proc.stderr
    assert "Traceback" not in proc.stderr


SCHEMA = ROOT / "doctor" / "schema" / "engine-probe-1.json"


def test_compare_engines_json_has_its_published_schema(monkeypatch, capsys):
    """Issue 35 item 2: the comparison's JSON is v100-doctor/engine-probe/1, validated against the schema the docs
    publish (docs/reference/schemas.md is generated from doctor/schema/)."""
    import jsonschema

    from doctor.model.engine_probe import EngineMeasurement as M

    got = [M("transformers", "bitsandbytes NF4", "ok", 9.0, 3_600_000_000, "synthetic"),
           M("exllamav2", "4-bit GPTQ", "ok", 52.0, 3_500_000_000, "synthetic"),
           M("llama.cpp", "Q4_K_M GGUF", "not-installed", error="llama-cpp-python is not installed")]
    code, out = _compare(monkeypatch, capsys, "exllamav2", got, as_json=True)
    doc = json.loads(out)
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    assert code == 0 and doc["schema"] == "v100-doctor/engine-probe/1" and doc["kind"] == "compare-engines"
    assert doc["engine"] == "exllamav2" and doc["engine_gap"]["tok_s"] == 52.0 and len(doc["measurements"]) == 3
    bad = {**doc, "measurements": [{"engine": "x", "format": "y", "outcome": "fast"}]}
    with pytest.raises(jsonschema.ValidationError):  # the schema can fail: an outcome it does not know
        jsonschema.validate(bad, json.loads(SCHEMA.read_text()))


def test_the_llama_cpp_dev_tool_writes_the_same_schema(monkeypatch, tmp_path):
    import jsonschema

    from doctor.model.engine_probe import LlamaCppProbe, LlamaCppRun
    from doctor.probe import llamacpp

    result = LlamaCppProbe("llama-cpp-python", "ok", "m.gguf", n_ctx=4096, runs=(LlamaCppRun(128, 40.0, 40.2),),
                           median_tok_s=40.0, spread_pct=0.0)
    monkeypatch.setattr(llamacpp, "probe", lambda *a, **k: [result])
    out = tmp_path / "probe_1.json"
    assert llamacpp.main(["m.gguf", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    assert doc["kind"] == "llamacpp-probe" and doc["llamacpp"][0]["median_tok_s"] == 40.0
