"""scripts/refresh_catalogue.py against a Hub on 127.0.0.1: an entry's config and GGUF files (names, summed sizes of
a split set) come from the Hub with its URL as their source; an entry the Hub does not have is kept as it was; the
written file is a catalogue the loader reads."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import ROOT
from plan_hub_support import plan_hub

from doctor.facts.catalogue.store import dumps

STORY = json.loads((ROOT / "fixtures/plans/story-qwen-27b-hub.json").read_text())


def test_refresh_reads_the_hub_and_keeps_what_it_cannot(tmp_path):
    old = {"repo": "story/Qwen-27B-Instruct", "family": "Qwen", "source": "https://example.org/old", "checked": "2026-01-01",
           "config": {"model_type": "qwen2", "num_hidden_layers": 1},
           "quants": [{"fmt": "gguf", "repo": "gguffer/Qwen-27B-Instruct-GGUF", "gguf_type": "Q4_K_M",
                       "source": "https://example.org/old", "checked": "2026-01-01"}]}
    gone = {"repo": "gone/Model", "family": "Gone", "source": "https://example.org/gone", "checked": "2026-01-01",
            "config": {"model_type": "llama", "num_hidden_layers": 2}}
    src = tmp_path / "models.json"
    src.write_text(dumps("2026-01-01", [], [old, gone]))
    with plan_hub(STORY) as (url, _):
        done = subprocess.run([sys.executable, "scripts/refresh_catalogue.py", "--file", str(src)], cwd=ROOT,
                              capture_output=True, text=True, timeout=120,
                              env={"HF_ENDPOINT": url, "HF_HUB_CACHE": str(tmp_path / "c"), "HF_HUB_OFFLINE": "0",
                                   "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert "gone/Model: kept as it was" in done.stderr
    data = json.loads(src.read_text())
    fresh, kept = data["entries"]
    assert fresh["config"] == STORY["story/Qwen-27B-Instruct"]["branches"]["main"]["config.json"]
    assert fresh["source"].startswith(f"{url}/story/Qwen-27B-Instruct/blob/") and fresh["checked"] == data["version"]
    q8 = next(q for q in fresh["quants"] if q["gguf_type"] == "Q8_0")
    files = STORY["gguffer/Qwen-27B-Instruct-GGUF"]["branches"]["main"]
    assert q8["filename"].endswith("-00001-of-00002.gguf")
    assert q8["bytes"] == sum(v for k, v in files.items() if "Q8_0" in k)
    assert kept == gone
