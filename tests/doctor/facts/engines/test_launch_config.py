"""Offload settings found in launch configs of the common servers, with line numbers; comments ignored."""

from __future__ import annotations

import pytest

from doctor.facts.engines.launch_config import parse_launch_config, read_launch_config


def settings(text: str) -> list[tuple[str, str, int]]:
    return [(h.setting, h.offload, h.line) for h in parse_launch_config(text, "x").hints]


def test_transformers_script_with_device_map_auto_and_max_memory():
    cfg = parse_launch_config(
        "import torch\n"
        "model = AutoModelForCausalLM.from_pretrained(path,\n"
        "    device_map='auto', max_memory={0: '13GiB', 'cpu': '48GiB'})\n", "serve.py")
    by = {(h.setting, h.offload): h for h in cfg.hints}
    assert ("device_map", "possible") in by and by[("device_map", "possible")].line == 3
    mm = [h for h in cfg.hints if h.setting == "max_memory"]
    assert {(h.gpu_gib, h.offload_gib) for h in mm} == {(None, 48.0), (13.0, None)}
    assert by[("device_map", "possible")].text.startswith("device_map='auto'")


def test_explicit_cpu_placement_and_bnb_fp32_offload_are_certain():
    text = ('device_map = {"model.embed_tokens": 0, "model.layers.60": "cpu", "lm_head": "disk"}\n'
            "quantization_config = BitsAndBytesConfig(load_in_4bit=True, llm_int8_enable_fp32_cpu_offload=True)\n")
    assert ("device_map", "certain", 1) in settings(text)
    assert ("llm_int8_enable_fp32_cpu_offload", "certain", 2) in settings(text)


def test_vllm_cpu_offload_gb_names_its_bytes():
    cfg = parse_launch_config("vllm serve /models/q27 --max-model-len 8192 --cpu-offload-gb 4\n", "run.sh")
    [h] = cfg.hints
    assert (h.setting, h.offload, h.offload_gib) == ("cpu_offload_gb", "certain", 4.0)
    assert settings("vllm serve m --cpu-offload-gb 0\n") == []  # 0 means no offload


@pytest.mark.parametrize("line, expect", [
    ("python server.py --model q27 --auto-devices --gpu-memory 14 --cpu-memory 30", {"auto_devices", "gpu_memory", "cpu_memory"}),
    ("./llama-server -m q27.gguf -ngl 40 -c 8192", {"n_gpu_layers"}),
    ("./llama-server -m q27.gguf --n-gpu-layers 0", {"n_gpu_layers"}),
    ("python server.py --cpu", {"cpu"}),
    ("cpu_offload_gb: 2", {"cpu_offload_gb"}),  # YAML
    ('{"device_map": "balanced_low_0"}', {"device_map"}),  # JSON
])
def test_each_server_family(line, expect):
    assert {s for s, _, _ in settings(line)} == expect


def test_llama_cpp_zero_gpu_layers_is_certain():
    assert settings("llama-server -m m.gguf -ngl 0") == [("n_gpu_layers", "certain", 1)]


def test_commented_lines_and_trailing_comments_are_ignored():
    text = "# device_map='auto'\n// cpu_offload_gb: 4\nmodel.load()  # device_map='auto' was slow\n"
    assert settings(text) == []


def test_exllamav2_config_has_no_offload_hints():
    text = "model:\n  model_name: qwen27b-exl2\n  gpu_split: [16]\n  cache_mode: Q8\n  max_seq_len: 8192\n"
    assert settings(text) == []


def test_reading_problems_become_errors(tmp_path):
    assert read_launch_config(str(tmp_path / "missing.py")).error.endswith("no such file")
    assert "is a directory" in read_launch_config(str(tmp_path)).error
    f = tmp_path / "serve.sh"
    f.write_text("vllm serve m --cpu-offload-gb 2\n")
    cfg = read_launch_config(str(f))
    assert cfg.error == "" and cfg.hints[0].setting == "cpu_offload_gb"
