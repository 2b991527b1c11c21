"""--model org/name[@revision]: from a cache laid out as huggingface_hub lays it out (checked with its own
scan_cache_dir), and, not cached, from config.json and safetensors headers served by a local HF_ENDPOINT."""

from __future__ import annotations

import json

import pytest
from conftest import ROOT, run_cli
from hub_support import COMMIT, cache_with, fake_hub

from doctor.facts.hub.model_id import hub_id

MODELS = ROOT / "fixtures" / "models"
MACHINE = "fixtures/machines/v100-pcie-16gb-healthy.json"


def findings(done) -> list[tuple[str, str]]:
    assert done.returncode in (0, 1, 2), done.stderr
    return [(f["id"], f["status"]) for f in json.loads(done.stdout)["findings"]]


@pytest.mark.parametrize("text, repo, rev", [("org/name", "org/name", None), ("Qwen/Qwen2.5-32B@main", "Qwen/Qwen2.5-32B", "main"),
                                             ("a-b/c.d_e@" + COMMIT, "a-b/c.d_e", COMMIT)])
def test_hub_ids(text, repo, rev):
    ident = hub_id(text)
    assert (ident.repo, ident.revision) == (repo, rev)


@pytest.mark.parametrize("text", ["/models/x", "./org/name", "~/org/name", "org/name/extra", "just-a-name", "org/na me"])
def test_paths_are_not_hub_ids(text):
    assert hub_id(text) is None


@pytest.mark.parametrize("model", ["tiny-gptq-desc-act", "tiny-sharded"])
def test_a_cached_id_reads_the_snapshot_like_its_folder(tmp_path, model):
    from huggingface_hub import scan_cache_dir

    cache = tmp_path / "hub"
    snapshot = cache_with(cache, f"someone/{model}", MODELS / model)
    scanned = scan_cache_dir(cache)
    assert not scanned.warnings and [r.repo_id for r in scanned.repos] == [f"someone/{model}"]
    env = {"HF_HUB_CACHE": str(cache), "HF_HUB_OFFLINE": "1"}
    by_id = run_cli("--replay", MACHINE, "--model", f"someone/{model}@main", "--json", env=env)
    by_flag = run_cli("--replay", MACHINE, "--model", str(MODELS / model), "--json")
    assert findings(by_id) == findings(by_flag)
    assert json.loads(by_id.stdout)["plan"]["model_path"] == str(snapshot)
    assert "read from the Hugging Face cache" in by_id.stderr


def test_hf_home_is_honoured_too(tmp_path):
    import os
    import subprocess
    import sys

    cache_with(tmp_path / "home" / "hub", "someone/tiny-exl2", MODELS / "tiny-exl2")
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE")}
    env.update(HF_HOME=str(tmp_path / "home"), HF_HUB_OFFLINE="1")
    done = subprocess.run([sys.executable, "-m", "doctor", "--replay", MACHINE, "--model", "someone/tiny-exl2", "--json"],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
    assert "read from the Hugging Face cache" in done.stderr, done.stderr


def test_offline_and_not_cached_is_one_line_exit_3(tmp_path):
    done = run_cli("--replay", MACHINE, "--model", "someone/absent", "--json",
                   env={"HF_HUB_CACHE": str(tmp_path), "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 3 and "not in the Hugging Face cache" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("model", ["tiny-sharded", "tiny-gptq"])
def test_not_cached_plans_from_config_and_headers_without_weights(tmp_path, model):
    folder = MODELS / model
    with fake_hub({f"someone/{model}": folder}) as (endpoint, sent):
        env = {"HF_ENDPOINT": endpoint, "HF_HUB_CACHE": str(tmp_path / "empty"), "HF_HUB_OFFLINE": "0", "HF_TOKEN": ""}
        by_id = run_cli("--replay", MACHINE, "--model", f"someone/{model}", "--json", env=env)
    by_flag = run_cli("--replay", MACHINE, "--model", str(folder), "--json")
    assert findings(by_id) == findings(by_flag), by_id.stderr
    assert "without downloading weights" in by_id.stderr
    doc = json.loads(by_id.stdout)
    assert doc["facts"]["model"]["kind"] == "hub-headers" and "no weights downloaded" in doc["facts"]["model"]["weights"]["source"]
    asked = [how for name, how in sent if name.endswith(".safetensors")]
    assert asked and all(how.startswith("bytes=") for how in asked)  # only header ranges, never a whole weight file
    assert not list((tmp_path / "empty").glob("**/*.safetensors"))


def test_an_unknown_repo_on_the_hub_is_exit_3(tmp_path):
    with fake_hub({}) as (endpoint, _):
        done = run_cli("--replay", MACHINE, "--model", "someone/nothing", "--json",
                       env={"HF_ENDPOINT": endpoint, "HF_HUB_CACHE": str(tmp_path), "HF_HUB_OFFLINE": "0"})
    assert done.returncode == 3 and "someone/nothing" in done.stderr and "Traceback" not in done.stderr


def test_an_unreachable_hub_names_the_download_command(tmp_path):
    """No network: the one-line error says which command puts the model in the cache (issue 26)."""
    import socket

    with socket.socket() as s:  # a port nothing listens on: the connection is refused at once
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    done = run_cli("--replay", MACHINE, "--model", "Qwen/Qwen2.5-32B-Instruct@main", "--json",
                   env={"HF_ENDPOINT": f"http://127.0.0.1:{port}", "HF_HUB_CACHE": str(tmp_path), "HF_HUB_OFFLINE": "0",
                        "HF_HUB_ETAG_TIMEOUT": "2", "HF_HUB_DOWNLOAD_TIMEOUT": "2"})
    assert done.returncode == 3 and "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "cannot reach the Hugging Face Hub" in done.stderr
    assert "download Qwen/Qwen2.5-32B-Instruct --revision main)" in done.stderr
    assert ("hf download" in done.stderr) or ("huggingface-cli download" in done.stderr)
