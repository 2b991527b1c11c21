"""`v100-doctor probe --engine transformers`: the Transformers probe from the CLI (stand-in torch/transformers/
bitsandbytes on PYTHONPATH: the real child runs, nothing needs a GPU), its exit codes, no tracebacks."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from conftest import run_cli

FAKES = Path(__file__).resolve().parents[1] / "probe" / "probe_fakes" / "fake_hf"
ROOT = Path(__file__).resolve().parents[3]


def env(tmp_path, *names: str) -> dict:
    site = tmp_path / "site"
    site.mkdir()
    for name in names:
        (site / name).symlink_to(FAKES / name)
    return {"PYTHONPATH": f"{site}{os.pathsep}{ROOT}", "FAKE_STEP_S": "0.001"}


def model_dir(tmp_path) -> Path:
    d = tmp_path / "model"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama",
                                               "hidden_size": 512, "intermediate_size": 1536, "num_attention_heads": 8,
                                               "num_key_value_heads": 2, "num_hidden_layers": 3, "vocab_size": 4096}))
    return d


def test_a_model_dir_is_probed_with_transformers_and_bitsandbytes(tmp_path):
    """Text on the terminal and the JSON in -o; --json alone prints only the JSON (it used to follow the text line,
    so stdout did not parse, and -o was ignored)."""
    out = tmp_path / "probe.json"
    args = ("probe", "--engine", "transformers", "--model", str(model_dir(tmp_path)), "--tokens", "16", "--warmup", "8")
    fakes = env(tmp_path, "torch", "transformers", "bitsandbytes")
    proc = run_cli(*args, "-o", str(out), env=fakes)
    assert proc.returncode == 0, proc.stderr
    assert re.match(r"transformers\+bitsandbytes: ok, [\d.]+ tok/s median of [23] runs", proc.stdout)  # 3, or 2 settled
    assert f"report written to {out}" in proc.stderr
    doc = json.loads(out.read_text())
    assert doc["probe"]["quant"] == "nf4" and doc["measurements"][0]["engine"] == "transformers"
    proc = run_cli(*args, "--json", "--no-redact", env=fakes)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["probe"]["model_path"] == str(model_dir_path(tmp_path))


def model_dir_path(tmp_path) -> Path:
    return tmp_path / "model"


def test_without_torch_it_is_not_installed_in_one_line(tmp_path):
    proc = run_cli("probe", "--engine", "transformers", "--model", str(model_dir(tmp_path)), env=env(tmp_path))
    assert proc.returncode == 3 and "Transformers (with torch) is not importable" in proc.stdout
    assert "Traceback" not in proc.stderr + proc.stdout


def test_a_synthetic_model_without_tokenizers_is_one_line_and_exit_3(tmp_path):
    e = env(tmp_path, "torch", "transformers")
    e["PYTHONPATH"] = f"{tmp_path / 'site'}{os.pathsep}{ROOT}"
    proc = run_cli("probe", "--engine", "transformers", "--synthetic", "--synthetic-layers", "1", env=e)
    try:
        import tokenizers  # noqa: F401
    except ImportError:
        assert proc.returncode == 3 and "need numpy and tokenizers" in proc.stderr and "Traceback" not in proc.stderr
    else:  # tokenizers here: the synthetic model is written and probed by the stand-ins
        assert proc.returncode == 0, proc.stderr


def _compare(monkeypatch, capsys, engine, measurements):
    import argparse

    from doctor.commands import probe_transformers
    from doctor.knowledge.gpus import spec_for_name
    from doctor.model.ids import Engine
    from doctor.model.plan import Plan

    monkeypatch.setattr(probe_transformers, "measure_same_shape",
                        lambda *a, **k: {"shape": None, "transformers": None, "measurements": measurements})
    monkeypatch.setattr(probe_transformers, "card", lambda index: (spec_for_name("Tesla V100-PCIE-16GB", 16384), "7.0"))
    args = argparse.Namespace(prompt_tokens=128, warmup=256, tokens=128, runs=3, synthetic_layers=16,
                              keep_synthetic=None, json=False)
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
