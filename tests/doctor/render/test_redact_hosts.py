"""Host names and IP addresses read from logs and configs: a site's own are redacted, public services', loopback
and version numbers with an address's shape are kept (issue 39)."""

from __future__ import annotations

import pytest

from doctor.render.redact import HOST, IP, Redactor, site_host


@pytest.mark.parametrize("name,site", [
    ("gpu-node-17.corp.example.com", True), ("ollama.lab.internal", True), ("gpu-box.local", True),
    ("worker03.mycompany.io", True), ("ip-10-0-0-5.ec2.internal", True),
    ("huggingface.co", False), ("cdn-lfs-us-1.hf.co", False), ("s3.amazonaws.com", False), ("docs.vllm.ai", False),
    ("download.pytorch.org", False), ("api.mycompany.io", False),
])
def test_site_host(name, site):
    assert site_host(name) is site


@pytest.mark.parametrize("line,gone", [
    ("connect 10.0.3.17:8080", "10.0.3.17"), ("nfs 192.168.1.20:/models", "192.168.1.20"),
    ("peer 172.31.255.1 down", "172.31.255.1"), ("link-local 169.254.169.254", "169.254.169.254"),
    ("tailscale 100.101.102.103", "100.101.102.103"), ("ssh gpu-node-17.corp.example.com", "gpu-node-17.corp.example.com"),
])
def test_site_values_are_replaced(line, gone):
    out = Redactor().text(line)
    assert gone not in out and (IP in out or HOST in out), out


@pytest.mark.parametrize("line", [
    "flash-attn 1.11.1.1; cudnn 8.9.7.29; cuda 10.2.89; driver 535.183.01; 10.1.105",
    "listening on 127.0.0.1:11434 and 0.0.0.0:8000; dns 8.8.8.8; 172.32.0.1 is public",
    "transformers.models.llama.modeling_llama; torch.cuda.OutOfMemoryError; config.json; model.safetensors.index.json",
    "see https://huggingface.co/Qwen/Qwen2.5-32B and https://download.pytorch.org/whl/cu121",
])
def test_versions_public_names_and_module_paths_stay(line):
    assert Redactor().text(line) == line
