"""What the robustness tests share: the environment a user's run gets (no doctor variables, a fresh home and
cache, this tree on PYTHONPATH) and a small model directory that reads as a Llama."""

from __future__ import annotations

import json
import os
from pathlib import Path

from conftest import ROOT


def _env(home: Path, extra: dict | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("V100_DOCTOR", "PYTHON"))}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), PYTHONPATH=str(ROOT), TERM="dumb")
    env.update(extra or {})
    return env


def _model_dir(root: Path) -> Path:
    d = root / "model"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama",
                                               "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
                                               "vocab_size": 32000, "max_position_embeddings": 4096}))
    header = json.dumps({"model.embed_tokens.weight": {"dtype": "F16", "shape": [4, 4], "data_offsets": [0, 32]}}).encode()
    (d / "model.safetensors").write_bytes(len(header).to_bytes(8, "little") + header + b"\0" * 32)
    return d
