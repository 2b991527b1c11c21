"""--engine-config: a llama-server command line or an Ollama model's parameters, as text or a file."""

from __future__ import annotations

import pytest

from doctor.facts.engines.launch import LaunchError, read_engine_config
from doctor.model.ids import Engine


def test_llama_server_flags_short_and_long():
    got = read_engine_config("llama-server -m /m/q.gguf -ngl 40 --ctx-size=8192 -ctk q8_0 -ctv Q8_0 -fa on -sm layer "
                             "-ts 3,1 -ub 256 --port 8080")
    assert got.engine == Engine.LLAMA_CPP
    assert (got.model_path, got.n_gpu_layers, got.n_ctx, got.cache_type_k, got.cache_type_v, got.flash_attn,
            got.split_mode, got.tensor_split, got.n_ubatch) == ("/m/q.gguf", 40, 8192, "q8_0", "q8_0", "on", "layer",
                                                                (3.0, 1.0), 256)


def test_bare_fa_of_older_builds_and_fa_off():
    assert read_engine_config("./llama-server -m x.gguf -fa -c 4096").flash_attn == "on"
    assert read_engine_config("llama-server -m x.gguf --flash-attn off").flash_attn == "off"
    assert read_engine_config("llama-cli -m x.gguf -ngl all").n_gpu_layers == -1


def test_ollama_parameters_and_modelfile(tmp_path):
    shown = read_engine_config("num_ctx                        8192\nnum_gpu                        30\nstop \"<|im_end|>\"\n")
    assert (shown.engine, shown.n_ctx, shown.n_gpu_layers) == (Engine.OLLAMA, 8192, 30)
    f = tmp_path / "Modelfile"
    f.write_text("FROM /models/q.gguf\nPARAMETER num_ctx 4096\n")
    got = read_engine_config(str(f))
    assert (got.model_path, got.n_ctx, got.source) == ("/models/q.gguf", 4096, str(f))


def test_ollama_environment_fills_what_the_parameters_leave():
    launch = read_engine_config("num_ctx 8192\n").with_ollama_env({"OLLAMA_FLASH_ATTENTION": "1", "OLLAMA_KV_CACHE_TYPE": "q8_0"})
    assert (launch.flash_attn, launch.cache_type_k, launch.cache_type_v, launch.n_ctx) == ("on", "q8_0", "q8_0", 8192)


@pytest.mark.parametrize("text,words", [
    ("just some words", "neither"),
    ("llama-server -m x.gguf -ngl many", "whole number"),
    ("llama-server -m x.gguf -ts a,b", "proportions"),
    ("llama-server -m 'x.gguf", "does not parse"),
    ("llama-server -m x.gguf -c", "no value"),
])
def test_bad_configs_name_the_problem(text, words):
    with pytest.raises(LaunchError, match=words):
        read_engine_config(text)
