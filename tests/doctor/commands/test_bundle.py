"""`v100-doctor bundle`: one archive for a ticket, redacted by default, and `--replay BUNDLE` opening it directly.

The redaction test builds a bundle from a fixture seeded with a fake token, API keys, a home path,
a hostname, a GPU serial and UUID, then searches every byte of the archive for them: the compressed
file itself, the decompressed tar stream (headers included), and every member.
"""

from __future__ import annotations

import gzip
import json
import socket
import tarfile
import zipfile

import jsonschema
import pytest
from conftest import MACHINES, ROOT, run_cli

SEEDED = ROOT / "fixtures" / "bundle" / "seeded-machine.json"
SEEDED_LOG = ROOT / "fixtures" / "bundle" / "seeded.log"
SECRETS = [b"hf_FAKEtokenDoNotUse0123456789abcdefXYZ", b"fakewandbkey0123456789", b"5f2b9c0e8d7a4b1cfake",
           b"/home/zoefake", b"zoefake", b"lab-v100-node17", b"example.test", b"1323920071234",
           b"5e2f9a1c-7b3d-4e8f-9a0b-1c2d3e4f5a6b"]
REPORT_SCHEMA = json.loads((ROOT / "doctor" / "schema" / "report-1.json").read_text())
LOG_SCHEMA = json.loads((ROOT / "doctor" / "schema" / "log-analysis-1.json").read_text())


def all_bytes(path) -> list[tuple[str, bytes]]:
    """Every byte stream a reader of the archive could see."""
    raw = path.read_bytes()
    streams = [("archive file", raw)]
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as zf:
            streams += [(i.filename, zf.read(i)) for i in zf.infolist()]
            streams += [("member names", "\n".join(zf.namelist()).encode())]
    else:
        streams.append(("tar stream", gzip.decompress(raw)))
        with tarfile.open(path) as tar:
            streams += [(m.name, tar.extractfile(m).read()) for m in tar if m.isfile()]
    return streams


def members(path) -> dict[str, bytes]:
    return {name.rsplit("/", 1)[-1]: data for name, data in all_bytes(path)[1:] if "/" in name}


def build(tmp_path, name: str, *extra: str):
    out = tmp_path / name
    proc = run_cli("bundle", "--replay", str(SEEDED), "--log", str(SEEDED_LOG), "-o", str(out), *extra)
    assert proc.returncode == 0, proc.stderr  # written: `bundle && upload` works whatever the findings
    return out, proc


@pytest.mark.parametrize("name", ["ticket.tar.gz", "ticket.zip"])
def test_a_redacted_bundle_holds_none_of_the_seeded_secrets(tmp_path, name):
    seeded = SEEDED.read_bytes() + SEEDED_LOG.read_bytes()
    assert all(s in seeded for s in SECRETS)  # the fixture really holds them
    out, proc = build(tmp_path, name)
    for where, data in all_bytes(out):
        for secret in SECRETS:
            assert secret.lower() not in data.lower(), f"{secret!r} leaked into {where} of {out.name}"
    manifest = json.loads(members(out)["MANIFEST.json"])
    assert manifest["redacted"] is True
    assert {"secret", "home path", "user name", "hostname", "GPU serial", "GPU UUID"} <= set(manifest["redactions"])
    assert manifest["secret_named_variables"] == ["HF_TOKEN", "WANDB_API_KEY"]
    assert "redacted: " in proc.stderr and "HF_TOKEN" in proc.stderr


def test_no_redact_keeps_everything_so_the_search_above_can_fail(tmp_path):
    out, proc = build(tmp_path, "raw.tar.gz", "--no-redact")
    found = {s for _, data in all_bytes(out) for s in SECRETS if s in data}
    assert {b"hf_FAKEtokenDoNotUse0123456789abcdefXYZ", b"/home/zoefake", b"lab-v100-node17", b"1323920071234"} <= found
    assert "NOT redacted" in proc.stderr


def test_the_bundle_holds_the_report_summary_and_log_analysis(tmp_path):
    out, _ = build(tmp_path, "ticket.tar.gz")
    files = members(out)
    assert set(files) == {"report.json", "summary.md", "log-analysis.json", "log-analysis.md", "MANIFEST.json"}
    report = jsonschema.validate(json.loads(files["report.json"]), REPORT_SCHEMA) or json.loads(files["report.json"])
    assert report["facts"]["host"]["hostname"] == "redacted-host" and report["facts"]["nvml"]["gpus"][0]["serial"] == "redacted-serial"
    analysis = json.loads(files["log-analysis.json"])
    jsonschema.validate(analysis, LOG_SCHEMA)
    crash = next(m for m in analysis["matches"] if m["signature"] == "no-safetensors-found")
    assert crash["numbers"]["model_dir"] == "~/models/Qwen2.5-27B [3.75bpw]"
    assert analysis["facts_source"].startswith("replay:")
    assert b"### v100-doctor" in files["summary.md"]
    with tarfile.open(out) as tar:  # no owner names in the tar headers
        assert {(m.uname, m.gname, m.uid, m.gid) for m in tar} == {("", "", 0, 0)}


def test_replay_opens_a_bundle_directly(tmp_path):
    out, _ = build(tmp_path, "ticket.zip")
    proc = run_cli("--replay", str(out), "--json", "--no-tui")
    assert proc.returncode in (0, 1, 2), proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["facts"]["nvml"]["gpus"][0]["name"] == "Tesla V100-PCIE-16GB"
    explain = run_cli("explain", str(SEEDED_LOG), "--replay", str(out), "--json")
    assert json.loads(explain.stdout)["facts_source"].startswith("replay:")


def test_bad_names_and_damaged_bundles_exit_3(tmp_path):
    proc = run_cli("bundle", "--replay", str(SEEDED), "-o", str(tmp_path / "ticket.rar"))
    assert proc.returncode == 3 and "must end in .tar.gz, .tgz or .zip" in proc.stderr
    proc = run_cli("bundle", "--replay", str(SEEDED), "--log", str(tmp_path / "none.log"), "-o", str(tmp_path / "t.zip"))
    assert proc.returncode == 3 and "no such file" in proc.stderr
    broken = tmp_path / "broken.tar.gz"
    broken.write_bytes(b"\x1f\x8b\x08\x00garbage")
    proc = run_cli("--replay", str(broken))
    assert proc.returncode == 3 and "damaged or not a bundle" in proc.stderr
    empty = tmp_path / "other.zip"
    with zipfile.ZipFile(empty, "w") as zf:
        zf.writestr("notes.txt", "hello")
    proc = run_cli("--replay", str(empty))
    assert proc.returncode == 3 and "has no report.json" in proc.stderr


def test_a_live_bundle_hides_this_machines_hostname(tmp_path):
    out = tmp_path / "live.tar.gz"
    proc = run_cli("bundle", "-o", str(out), env={"MY_FAKE_SERVICE_TOKEN": "live-fake-secret-98765"}, timeout=120)
    assert proc.returncode in (0, 1, 2, 4), proc.stderr
    host = socket.gethostname().split(".")[0]
    for where, data in all_bytes(out):
        assert b"live-fake-secret-98765" not in data, where
        if len(host) >= 4 and host.lower() not in {"localhost", "runner", "server", "worker", "node", "host"}:
            assert host.encode().lower() not in data.lower(), where
    assert json.loads(members(out)["report.json"])["source"] == "live"


def test_a_written_bundle_exits_0_and_keeps_the_findings_status_on_stderr_and_in_the_manifest(tmp_path):
    """Issue 23: `bundle && upload` broke because the bundle exited 2 after writing a machine with a failure."""
    failing = MACHINES / "v100-torch-2.11-cu130.json"
    assert run_cli("--replay", str(failing), "--no-tui").returncode == 2  # the machine really fails a check
    out = tmp_path / "t.tar.gz"
    proc = run_cli("bundle", "--replay", str(failing), "-o", str(out))
    assert proc.returncode == 0 and out.is_file(), proc.stderr
    assert "failed" in proc.stderr and "would exit 2" in proc.stderr
    manifest = json.loads(members(out)["MANIFEST.json"])
    assert manifest["findings"]["exit_code"] == 2 and "failed" in manifest["findings"]["summary"]
    missing = run_cli("bundle", "--replay", str(failing), "--model", str(tmp_path / "nothing"), "-o", str(out))
    assert missing.returncode == 3  # a bad input is still an input error


SITE = ["gpu-node-17.corp.example.com", "gpu-node-17", "ollama.lab.internal", "worker03.mycompany.io", "10.0.3.17",
        "192.168.1.20", "172.20.0.5", "169.254.10.2", "100.70.1.9"]
PUBLIC = ["huggingface.co", "download.pytorch.org", "pip.pypa.io", "8.8.8.8", "127.0.0.1"]


@pytest.mark.parametrize("name", ["ticket.tar.gz", "ticket.zip"])
def test_other_hosts_and_private_addresses_in_logs_are_redacted_public_ones_kept(tmp_path, name):
    """Issue 39: the bundle kept other host names found in logs (gpu-node-17.corp.example.com) though its help says
    host names are redacted; now a site's host names and private IP addresses go, public services' stay."""
    log = tmp_path / "run.log"
    log.write_text("\n".join([
        "ERROR: ssh gpu-node-17.corp.example.com: connection refused (10.0.3.17:22)",
        "ERROR: scp to gpu-node-17 failed; NFS 192.168.1.20:/models stale; peer 172.20.0.5 and 169.254.10.2 down",
        "ERROR: OLLAMA_HOST=http://ollama.lab.internal:11434 unreachable; worker03.mycompany.io via 100.70.1.9",
        "ERROR: pip could not fetch https://download.pytorch.org/whl/cu121 (see https://pip.pypa.io/warnings/venv)",
        "ERROR: huggingface.co unreachable via 8.8.8.8; local server 127.0.0.1:8080 down",
        "RuntimeError: CUDA error: no kernel image is available for execution on the device"]) + "\n")
    out = tmp_path / name
    proc = run_cli("bundle", "--replay", str(SEEDED), "--log", str(log), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    texts = [(where, data) for where, data in all_bytes(out) if where.endswith((".json", ".md"))]
    for where, data in texts:
        for value in SITE:
            assert value.encode() not in data, f"{value} leaked into {where}"
    analysis = members(out)["log-analysis.json"].decode()
    assert all(p in analysis for p in PUBLIC), analysis  # the search above can fail, and public names stay
    manifest = json.loads(members(out)["MANIFEST.json"])
    assert {"hostname", "IP address"} <= set(manifest["redactions"])


def test_the_bundles_help_says_what_is_kept():
    out = run_cli("bundle", "--help", env={"COLUMNS": "200"}).stdout
    assert "Kept: public services' host names" in out and "192.168.x" in out
