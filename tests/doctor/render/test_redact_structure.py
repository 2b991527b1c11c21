"""Issue 23: redaction by structure. For every example and fixture (and a live report from this machine) the
redacted report differs from the report only where an identifying value sat, and the doctor's own words are
byte-identical elsewhere; stand-ins are numbered the same in two processes with different hash seeds; and they
survive GitHub's Markdown (a GFM parser finds every kind of stand-in in the rendered text)."""

from __future__ import annotations

import json
import re

import pytest
from conftest import ROOT, run_cli
from identity_support import HOSTNAME, MAC, MACHINE_ID, SERIAL, UUID, leaked, planted_fixture

from doctor.model.report import report_to_dict
from doctor.model.source import SavedFile, ThisMachine
from doctor.render import redact
from doctor.render.redact import HOST, REPORT_PROSE, SECRET, USER, Redactor, shareable, stand_ins_in
from doctor.run.run import Run

EXAMPLES = sorted((ROOT / "doctor" / "examples").glob("*.json"))
FIXTURES = [p for folder in ("machines", "models", "samples", "bundle", "probes")
            for p in sorted((ROOT / "fixtures" / folder).glob("*.json"))
            if '"schema"' in p.read_text()[:4000]]
_HOME = re.compile(r"(?:/home|/Users)/[^/\s\"'\\:;,`]+")
_GPU_UUID = re.compile(r"\b(?:GPU|MIG)-[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\b")
_SECRET_KEY = re.compile(r"(?i)(?:^|_)(?:token|secret|password|passwd|api_?key)$")
_MAC = re.compile(r"\b(?:[0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}\b")
_MACHINE_ID = re.compile(r"(?i)(?<=machine-id=)[0-9a-f]{32}")


def identifying_values(facts: dict) -> set[str]:
    """The values a report may hide, found by this test on its own (not by the Redactor): the identifying fields,
    secret-named variables, home paths and GPU UUIDs in what was read from the machine."""
    found: set[str] = set()

    def walk(obj, key=""):
        if isinstance(obj, dict):
            for k, v in obj.items():
                walk(v, str(k))
        elif isinstance(obj, list):
            for v in obj:
                walk(v, key)
        elif isinstance(obj, str) and obj:
            if key in ("hostname", "serial", "uuid") or _SECRET_KEY.search(key):
                found.add(obj)
                found.add(obj.split(".", 1)[0])
            found.update(m.group(0) for m in _HOME.finditer(obj))
            for pattern in (_GPU_UUID, _MAC, _MACHINE_ID):
                found.update(m.group(0) for m in pattern.finditer(obj))
            found.update(m.group(0).rsplit("/", 1)[-1] for m in _HOME.finditer(obj))  # the user name in it
    walk(facts)
    return {v for v in found if len(v) >= 3}


def changed_outside(original: str, redacted: str, values: set[str]) -> bool:
    """True when redaction changed `original` anywhere but at an identifying value: every other piece of it must
    stand in `redacted` byte for byte and in order, the values alone replaced."""
    covered = [False] * len(original)
    for value in values:
        for m in re.finditer(re.escape(value), original, re.IGNORECASE):
            covered[m.start():m.end()] = [True] * (m.end() - m.start())
    pattern, i = "", 0
    while i < len(original):
        j = i
        while j < len(original) and covered[j] == covered[i]:
            j += 1
        pattern += ".*?" if covered[i] else re.escape(original[i:j])
        i = j
    return re.fullmatch(pattern, redacted, re.DOTALL) is None


def pairs(a, b, path="$"):
    """(path, original string, redacted string) for every string leaf of two documents of one shape."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), path
        for k in a:
            yield from pairs(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            yield from pairs(x, y, f"{path}[{i}]")
    elif isinstance(a, str):
        assert isinstance(b, str), path
        yield path, a, b
    else:
        assert a == b, path


def check_differs_only_at_identifying_values(report, redacted) -> int:
    original, shared = report_to_dict(report), report_to_dict(redacted)
    values = identifying_values({k: v for k, v in original.items() if k not in REPORT_PROSE})
    prose_changes = 0
    for path, a, b in pairs(original, shared):
        if a == b:
            continue
        top = path.split(".")[1].split("[")[0]
        if top in REPORT_PROSE:
            prose_changes += 1
            assert not changed_outside(a, b, values), (path, a, b)
        else:  # what was read from the machine changes only into a stand-in (or a home path into ~)
            assert stand_ins_in([b]) or "~" in b, (path, a, b)
    return prose_changes


def replayed(path):
    return Run(SavedFile(str(path))).execute()


@pytest.mark.parametrize("path", EXAMPLES + FIXTURES, ids=lambda p: p.name)
def test_redaction_changes_nothing_but_identifying_values(path):
    report = replayed(path)
    check_differs_only_at_identifying_values(report, shareable(report))


def test_the_doctors_prose_is_byte_identical_where_it_names_nothing_identifying():
    """Issue 23's first defect: "GB per token: 12.79" lost its number to a secret pattern."""
    report = replayed(ROOT / "doctor" / "examples" / "seed-3-q8-cache-8192.json")
    original, shared = report_to_dict(report), report_to_dict(shareable(report))
    for key in REPORT_PROSE:
        assert original.get(key) == shared.get(key), key  # (900 == 900.0: the model's float fields load as floats)
    assert "per token" in json.dumps(original.get("verdict") or original.get("findings"))


def test_a_planted_identity_leaves_only_at_its_values_even_in_prose(tmp_path):
    report = replayed(planted_fixture(tmp_path))
    shared = shareable(report)
    assert check_differs_only_at_identifying_values(report, shared) > 0  # some prose quoted the planted values
    assert not leaked(json.dumps(report_to_dict(shared), ensure_ascii=False))


def test_a_live_report_from_this_machine(monkeypatch):
    monkeypatch.setenv("H23_FAKE_API_TOKEN", "tokvalue-9876543210")
    report = Run(ThisMachine()).execute()
    redacted = shareable(report)
    check_differs_only_at_identifying_values(report, redacted)
    assert "tokvalue-9876543210" not in json.dumps(report_to_dict(redacted))


def test_the_check_above_fails_when_a_pattern_rewrites_prose():
    """The property test can fail: a redaction that takes the word after "token:" is caught."""
    report = replayed(ROOT / "doctor" / "examples" / "seed-3-q8-cache-8192.json")
    data = report_to_dict(report)
    bad = json.loads(re.sub(r"(per token:? )(\S+)", r"\1" + SECRET, json.dumps(data)))
    original_prose = json.dumps({k: data.get(k) for k in REPORT_PROSE})
    assert re.search(r"per token:? \S+", original_prose)
    values = identifying_values(data["facts"])
    assert any(changed_outside(a, b, values) for _, a, b in pairs(data, bad) if a != b)


def test_secret_forms_in_a_log_are_all_redacted_and_prose_like_lines_are_not():
    r = Redactor()
    lines = ["python server.py --api-key s3cr3tValue99 --password hunter2x", "MYSQL_PWD=abcdef123 GPG_PASSPHRASE=zzyx4321",
             'curl -H "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9abc"', "-- boot 0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0 --",
             "AKIAABCDEFGHIJKLMNOP sk-proj-abcdefghijklmnopqrstuv hf_FAKEtokenDoNotUse0123456789abcdefXYZ",
             "https://bob:hunter22x@pypi.example.com/simple", "INFO: Your API key is: 5f2b9c0e8d7a4b1c9d"]
    out = "\n".join(r.text(line) for line in lines)
    for secret in ("s3cr3tValue99", "hunter2x", "abcdef123", "zzyx4321", "eyJhbGci", "0b1c2d3e", "AKIAABCD",
                   "sk-proj", "hf_FAKE", "hunter22x", "5f2b9c0e"):
        assert secret not in out, secret
    assert "--api-key " + SECRET in out and "MYSQL_PWD=" + SECRET in out
    plain = "12.79 GB per token: 33 weights; per token is 3 ms; key_bytes_per_token=139264; --max-seq-len 8192"
    assert r.text(plain) == plain


def test_uuid_stand_ins_are_the_same_under_any_hash_seed():
    path = ROOT / "fixtures" / "machines" / "dgx1-8x-v100.json"
    outs = [run_cli("--replay", str(path), "--json", env={"PYTHONHASHSEED": seed}).stdout for seed in ("1", "2", "3")]
    assert outs[0] and "GPU-uuid-1-redacted" in outs[0]
    uuids = [re.findall(r"GPU-uuid-\d+-redacted", o) for o in outs]
    assert uuids[0] == uuids[1] == uuids[2]
    doc = json.loads(outs[0])
    assert [g["uuid"] for g in doc["facts"]["nvml"]["gpus"]] == [f"GPU-uuid-{i}-redacted" for i in range(1, 9)]


def gfm_text(markdown: str) -> str:
    """What GitHub shows: the text of a GFM rendering (inline HTML dropped, as GitHub drops unknown tags)."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("gfm-like")
    words = []

    def walk(tokens):
        for t in tokens:
            if t.type in ("html_inline", "html_block"):
                continue
            if t.children:
                walk(t.children)
            elif t.type in ("text", "code_inline", "code_block", "fence"):
                words.append(t.content)

    walk(md.parse(markdown))
    return "\n".join(words)


def test_every_kind_of_stand_in_survives_a_gfm_rendering(tmp_path):
    path = planted_fixture(tmp_path)
    doc = json.loads(path.read_text())
    doc["facts"]["python"]["torch"]["warnings"].append(
        f"serial: {SERIAL} on {UUID} at /home/plantuser/x by plantuser HF_TOKEN=hf_FAKEtokenDoNotUse0123456789abcdef")
    path.write_text(json.dumps(doc))
    result = run_cli("--replay", str(path), "--markdown")
    rendered = gfm_text(result.stdout)
    for stand_in in (HOST, USER, redact.SERIAL, SECRET, redact.MAC, redact.MACHINE_ID, "GPU-uuid-1-redacted", "~/x"):
        assert stand_in in result.stdout, stand_in
        assert stand_in in rendered, stand_in
    for planted in (HOSTNAME, SERIAL, MAC, MACHINE_ID.split("=")[1], "hf_FAKE"):
        assert planted not in result.stdout


def test_the_gfm_check_would_catch_angle_bracket_stand_ins():
    assert "<gpu-uuid-2>" not in gfm_text("GPU-<gpu-uuid-2> on <host> (laptop)")
    assert "redacted-host" in gfm_text("| redacted-host (laptop) | GPU-uuid-2-redacted |")


def test_explain_json_and_markdown_are_redacted(tmp_path):
    log = tmp_path / "run.log"
    log.write_text("RuntimeError: CUDA error: no kernel image is available for execution on the device "
                   "HF_TOKEN=hf_FAKEtokenDoNotUse0123456789abcdefXYZ at /home/zoefake/run.py\n"
                   "error: --api-key s3cr3tValue99 refused\n", encoding="utf-8")
    for fmt in ("--json", "--markdown"):
        result = run_cli("explain", str(log), "--no-live", fmt, "-o", str(tmp_path / "a.json"))
        written = (tmp_path / "a.json").read_text()
        for secret in ("hf_FAKE", "zoefake", "s3cr3tValue99"):
            assert secret not in result.stdout and secret not in written, (fmt, secret)
    kept = run_cli("explain", str(log), "--no-live", "--json", "--no-redact").stdout
    assert "hf_FAKE" in kept  # the search above can fail

