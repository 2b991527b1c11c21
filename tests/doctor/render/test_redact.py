"""The Redactor on its own: what it hides, what it leaves alone, and that it counts without keeping values."""

from __future__ import annotations

import pytest

from doctor.model.identities import Identities
from doctor.render.redact import HOST, SECRET, SERIAL, USER, Redactor, secret_name


def redactor(**learned) -> Redactor:
    r = Redactor()
    for text in learned.get("texts", []):
        r.learn_text(text)
    if "json" in learned:
        r.learn_json(learned["json"])
    return r


@pytest.mark.parametrize("name,secret", [
    ("HF_TOKEN", True), ("OPENAI_API_KEY", True), ("DB_PASSWORD", True), ("aws_secret_access_key", True),
    ("GITHUB_PAT", True), ("HUGGINGFACEHUB_API_TOKEN", True), ("TOKENIZERS_PARALLELISM", False),
    ("CACHE_MODE", False), ("CUDA_HOME", False), ("max_seq_len", False), ("monkey", False),
])
def test_secret_names(name, secret):
    assert secret_name(name) is secret


def test_home_path_and_user_name_found_in_any_text_are_replaced():
    r = redactor(texts=['File "/home/zoefake/tabbyAPI/main.py", line 121'])
    out = r.text('zoefake@box:~$ ls /home/zoefake/models and C:\\Users\\zoefake\\AppData (/home/zoefake2 stays)')
    assert "zoefake@" not in out and "/home/zoefake/" not in out
    assert out.startswith(f"{USER}@box:~$ ls ~/models")
    assert "zoefake2" not in out  # another user's home read in the same text is hidden too
    assert r.counts["home path"] == 3 and r.counts["user name"] >= 1


def test_hostnames_serials_uuids_and_secrets_from_json_are_replaced_everywhere():
    facts = {"host": {"hostname": "lab-v100-node17.example.test"},
             "gpus": [{"serial": "1323920071234", "uuid": "GPU-5e2f9a1c-7b3d-4e8f-9a0b-1c2d3e4f5a6b"}],
             "env": {"HF_TOKEN": "hf_FAKEtokenDoNotUse0123456789abcdefXYZ", "CUDA_HOME": "/usr/local/cuda"}}
    r = redactor(json=facts)
    red = r.json(facts)
    assert red["host"]["hostname"] == HOST and red["gpus"][0] == {"serial": SERIAL, "uuid": "GPU-uuid-1-redacted"}
    assert red["env"] == {"HF_TOKEN": SECRET, "CUDA_HOME": "/usr/local/cuda"}
    line = r.text("ssh lab-v100-node17 ; token hf_FAKEtokenDoNotUse0123456789abcdefXYZ on LAB-V100-NODE17.example.test, "
                  "serial 1323920071234, GPU-5e2f9a1c-7b3d-4e8f-9a0b-1c2d3e4f5a6b")
    for value in ("lab-v100-node17", "LAB-V100", "hf_FAKE", "1323920071234", "5e2f9a1c"):
        assert value not in line
    assert "abcdefXYZ" not in repr(r.counts) and "HF_TOKEN" in r.describe()
    assert line.endswith("GPU-uuid-1-redacted")  # the same stand-in in text as in the uuid field


def test_each_uuid_gets_its_own_stand_in_so_cuda_visible_devices_still_names_the_same_gpu():
    first, second = "GPU-5e2f9a1c-7b3d-4e8f-9a0b-1c2d3e4f5a6b", "MIG-0a1b2c3d-7b3d-4e8f-9a0b-1c2d3e4f5a6b"
    r = redactor(json={"gpus": [{"uuid": first}, {"uuid": second}]})
    red = r.json({"gpus": [{"uuid": first}, {"uuid": second}], "env": {"CUDA_VISIBLE_DEVICES": f"{second},{first}"}})
    assert [g["uuid"] for g in red["gpus"]] == ["GPU-uuid-1-redacted", "MIG-uuid-2-redacted"]
    assert red["env"]["CUDA_VISIBLE_DEVICES"] == "MIG-uuid-2-redacted,GPU-uuid-1-redacted"
    assert r.json(red) == red  # redacting twice changes nothing


def test_secrets_in_text_are_found_by_name_by_phrase_and_by_shape():
    r = redactor()
    out = r.text("export OPENAI_API_KEY=sk-fake012345678901234567890 ; INFO: Your API key is: 5f2b9c0e8d7a4b1c ; "
                 '"WANDB_API_KEY": "abcdefgh12345" ; ghp_FAKEfakeFAKEfakeFAKEfakeFAKEfake1234')
    assert "sk-fake" not in out and "5f2b9c0e" not in out and "abcdefgh12345" not in out and "ghp_" not in out
    assert "OPENAI_API_KEY=" in out and "Your API key is: " in out  # the names stay, so the reader knows what was there
    assert r.counts["secret"] == 4


def test_generic_or_short_names_are_left_alone():
    r = redactor(json={"host": {"hostname": "gpu"}})
    r._add_user("root")
    out = r.text("gpu-present passed on gpu as root; Ubuntu 22.04")
    assert out == "gpu-present passed on gpu as root; Ubuntu 22.04"
    assert r.describe() == "nothing to redact was found"


def test_the_machines_given_identities_are_learned():
    machine = Identities(home="/srv/people/kim", user="kimlee", hostnames=("my-workstation-42", "my-workstation-42.corp.example"),
                         environment=(("MY_SERVICE_TOKEN", "tok-value-12345"), ("CACHE_MODE", "Q4"), ("PATH", "/usr/bin")))
    r = Redactor(machine)
    out = r.text("kimlee built /srv/people/kim/llm on my-workstation-42.corp.example with tok-value-12345, Q4 cache")
    assert out == f"{USER} built ~/llm on {HOST} with {SECRET}, Q4 cache"
    assert Redactor().text(out) == out and Redactor().text("my-workstation-42") == "my-workstation-42"


def test_url_passwords_machine_ids_and_macs_in_a_log_are_redacted():
    from doctor.render.redact import Redactor

    r = Redactor()
    out = r.text("https://bob:hunter2@pypi.example.com/simple machine-id: 4a3b2c1d5e6f47a8b9c0d1e2f3a4b5c6 "
                 "boot_id=0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0 link/ether 00:1a:2b:3c:4d:5e at 12:30:45")
    assert "hunter2" not in out and "4a3b2c1d" not in out and "0b1c2d3e" not in out and "00:1a:2b" not in out
    assert "12:30:45" in out and "bob:" in out


def test_control_characters_are_made_visible():
    from doctor.render.untrusted import visible

    assert visible("a\x1b]52;c;eA==\x07b\x9b\tc\n") == "a^[]52;c;eA==^Gb\\x9b\tc\n"
