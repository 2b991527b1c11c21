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
    proc = run_cli("probe", "--engine", "transformers", "--model", str(model_dir(tmp_path)), "--tokens", "16",
                   "--warmup", "8", "--json", env=env(tmp_path, "torch", "transformers", "bitsandbytes"))
    assert proc.returncode == 0, proc.stderr
    assert re.match(r"transformers\+bitsandbytes: ok, [\d.]+ tok/s median of [23] runs", proc.stdout)  # 3, or 2 settled
    doc = json.loads(proc.stdout[proc.stdout.index("\n{") + 1:])
    assert doc["probe"]["quant"] == "nf4" and doc["measurements"][0]["engine"] == "transformers"


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
