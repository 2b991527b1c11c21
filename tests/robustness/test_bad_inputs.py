"""Bad input and faults, through the real CLI in child processes: documented exit code, no traceback, no
"internal error", nothing written outside -o and the cache, no child left behind, model dirs untouched. The table's
~220 children are forked from one server that started Python and imported the doctor once (doctor_forkserver.py)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from conftest import MACHINES, ROOT
from doctor_forkserver import DoctorForkServer
from robust_support import _env, _model_dir

FIXTURE = MACHINES / "v100-torch-2.11-cu130.json"
BAD_NUMBERS = ["nan", "inf", "-inf", "1e309", "-1", "0", "banana", ""]
OK_REPORT = {0, 1, 2}  # a replay whose bad facts became unknown still runs every check
USAGE = {3}


def _report(tmp: Path, name: str, mutate) -> str:
    doc = json.loads(FIXTURE.read_text())
    mutate(doc)
    p = tmp / f"{name}.json"
    p.write_text(json.dumps(doc, allow_nan=True))
    return str(p)


def _gpu(field, value):
    return lambda d: d["facts"]["nvml"]["gpus"][0].__setitem__(field, value)


def _config_dir(tmp: Path, name: str, **changes) -> str:
    d = tmp / f"cfg-{name}"
    d.mkdir()
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
           "num_attention_heads": 32, "vocab_size": 32000, **changes}
    (d / "config.json").write_text(json.dumps(cfg, allow_nan=True))
    return str(d)


def _cases(tmp: Path, model: Path) -> list[tuple[str, list[str], set[int]]]:
    cases: list[tuple[str, list[str], set[int]]] = []
    add = lambda name, args, codes: cases.append((name, args, codes))  # noqa: E731
    for v in BAD_NUMBERS:  # flags: every subcommand shares one set of argparse types
        add(f"gpu-split {v}", ["--replay", str(FIXTURE), "--gpu-split", v], USAGE)
        add(f"torch-timeout {v}", ["--torch-timeout", v], USAGE)
        add(f"nvml-timeout {v}", ["--nvml-timeout", v], USAGE)
        add(f"max-seq-len {v}", ["--replay", str(FIXTURE), "--max-seq-len", v], USAGE)
        add(f"probe synthetic-gb {v}", ["probe", "--synthetic", "--synthetic-gb", v], USAGE)
        add(f"watch seconds {v}", ["watch", "--seconds", v], USAGE)
        add(f"watch hz {v}", ["watch", "--hz", v], USAGE)
        add(f"probe tokens {v}", ["probe", "--synthetic", "--tokens", v], USAGE)
    for v in ["-1", "64", "banana", "1e3"]:
        add(f"gpu {v}", ["--replay", str(FIXTURE), "--gpu", v], USAGE)
    add("gpu-split 10,,14", ["--gpu-split", "10,,14"], USAGE)
    add("max-seq-len 400 digits", ["--max-seq-len", "9" * 400], USAGE)
    for flag in ("--model", "-o", "--replay"):
        add(f"empty {flag}", ["--replay", str(FIXTURE), flag, ""] if flag != "--replay" else [flag, ""], USAGE)
    add("explain empty path", ["explain", ""], USAGE)
    add("explain unknown encoding", ["explain", str(tmp / "log.txt"), "--encoding", "utf-99", "--no-live"], USAGE)
    add("explain base64 encoding", ["explain", str(tmp / "log.txt"), "--encoding", "base64", "--no-live"], USAGE)
    add("explain utf-32 without BOM", ["explain", str(tmp / "log.txt"), "--encoding", "utf-32", "--no-live"], USAGE)
    add("explain /dev/zero", ["explain", "/dev/zero", "--no-live"], USAGE)
    add("explain directory", ["explain", str(tmp), "--no-live"], USAGE)
    add("explain missing", ["explain", str(tmp / "nope.log"), "--no-live"], USAGE)
    add("explain binary", ["explain", str(tmp / "binary.log"), "--no-live"], USAGE)
    add("explain escapes", ["explain", str(tmp / "escapes.log"), "--no-live"], {0, 1, 2})
    add("explain escapes markdown", ["explain", str(tmp / "escapes.log"), "--no-live", "--markdown"], {0, 1, 2})
    add("unknown check id", ["--replay", str(FIXTURE), "--check", "nope"], USAGE)
    add("unknown target gpu", ["--target-gpu", "gtx-9999"], USAGE)
    add("unknown subcommand flag", ["watch", "--bogus"], USAGE)
    add("-o into a missing folder", ["--replay", str(FIXTURE), "-o", str(tmp / "no" / "such" / "r.json")], USAGE)
    add("model missing", ["--replay", str(FIXTURE), "--model", str(tmp / "missing-model")], USAGE)
    # replayed documents that are not reports
    for name, path in (("dev-zero", "/dev/zero"), ("fifo", str(tmp / "fifo")), ("directory", str(tmp)),
                       ("missing", str(tmp / "none.json")), ("dev-null", "/dev/null")):
        add(f"replay {name}", ["--replay", path], USAGE)
        add(f"explain --replay {name}", ["explain", str(tmp / "log.txt"), "--replay", path], USAGE)
    add("watch --config /dev/zero", ["watch", "--config", "/dev/zero", "--seconds", "1"], USAGE)
    add("watch --config fifo", ["watch", "--config", str(tmp / "fifo"), "--seconds", "1"], USAGE)
    for name, text in (("empty", ""), ("list", "[]"), ("null", "null"), ("number", "1"), ("string", '"ok"'),
                       ("truncated", '{"schema": "v100-doctor/report/1", "facts": {'), ("wrong schema", '{"schema": "x"}'),
                       ("newer schema", '{"schema": "v100-doctor/report/9"}'), ("nested", "[" * 100_000 + "]" * 100_000),
                       ("nested object", '{"a":' * 50_000 + "1" + "}" * 50_000), ("huge int", "9" * 5000),
                       ("no facts", '{"schema": "v100-doctor/report/1"}'), ("facts list", '{"schema": "v100-doctor/report/1", "facts": []}')):
        p = tmp / f"doc-{len(cases)}.json"
        p.write_text(text)
        add(f"replay {name}", ["--replay", str(p)], USAGE)
    (tmp / "latin1.json").write_bytes(b'{"schema": "v100-doctor/report/1", "note": "\xff\xfe"}')
    add("replay not UTF-8", ["--replay", str(tmp / "latin1.json")], USAGE)
    # numbers that are not numbers, in a replayed report: unknown with the reason, never a crash or a pass on NaN
    fields = ["memory_free_mib", "memory_total_mib", "memory_used_mib", "temperature_c", "sm_clock_mhz", "power_draw_w",
              "utilization_gpu_pct", "pcie_gen", "pcie_width", "ecc_uncorrected_volatile", "retired_pages_count",
              "slowdown_temperature_c", "mem_clock_max_mhz", "power_limit_w"]
    for field in fields:
        for label, value in (("nan", float("nan")), ("inf", float("inf")), ("negative", -16156), ("400 digits", int("9" * 400)),
                             ("text", "banana")):
            add(f"replay {field} {label}", ["--replay", _report(tmp, f"{field}-{label}", _gpu(field, value))], OK_REPORT | USAGE)
    for label, value in (("banana", "banana"), ("number", 7.0), ("empty", ""), ("huge", "99999.1")):
        add(f"replay compute_capability {label}", ["--replay", _report(tmp, f"cc-{label}", _gpu("compute_capability", value))], OK_REPORT | USAGE)
    add("replay plan gpu_split nan", ["--replay", _report(tmp, "plan-nan", lambda d: d.setdefault("plan", {}).update(gpu_split=[float("nan")]))], USAGE)
    add("replay plan max_seq_len -1", ["--replay", _report(tmp, "plan-neg", lambda d: d.setdefault("plan", {}).update(max_seq_len=-1))], USAGE)
    # model configs whose numbers lie: model-path fails (2), never a crash
    for key, value in (("hidden_size", 0), ("hidden_size", -1), ("num_hidden_layers", 10**12), ("num_hidden_layers", -1),
                       ("num_attention_heads", 0), ("vocab_size", int("9" * 400)), ("rope_theta", float("nan")),
                       ("max_position_embeddings", 10**18), ("head_dim", 0), ("num_key_value_heads", -8)):
        add(f"config {key} {value!s:.12}", ["--replay", str(FIXTURE), "--model", _config_dir(tmp, f"{key}{value!s:.8}", **{key: value})], {2})
    add("config nested", ["--replay", str(FIXTURE), "--model", str(tmp / "cfg-nested")], {2})
    add("config fifo safetensors", ["--replay", str(FIXTURE), "--model", str(tmp / "fifo-model")], {2})
    add("safetensors dtype Q99", ["--replay", str(FIXTURE), "--model", str(tmp / "q99-model")], {2})
    add("gguf 2^63 tensors", ["--replay", str(FIXTURE), "--model", str(tmp / "lying.gguf")], {2})
    add("config.json /dev/zero link", ["--replay", str(FIXTURE), "--model", str(tmp / "zero-model")], {2})
    # a model whose name is not UTF-8 (a model: a path that names none stops before any report, tests/doctor/cli/test_not_a_model.py)
    add("non-UTF-8 model name --json", ["--replay", str(FIXTURE), "--model", os.fsdecode(bytes(tmp / "m") + b"\xff\xfe"), "--json"], OK_REPORT)
    add("non-UTF-8 model name -o", ["--replay", str(FIXTURE), "--model", os.fsdecode(bytes(tmp / "m") + b"\xff\xfe"),
                                    "-o", str(tmp / "out-nonutf8.json")], OK_REPORT)
    add("good model", ["--replay", str(FIXTURE), "--model", str(model), "--no-probe"], OK_REPORT)
    add("probe model missing", ["probe", "--model", str(tmp / "missing-model")], USAGE)
    add("explain model missing", ["explain", str(tmp / "log.txt"), "--no-live", "--model", str(tmp / "missing-model")], USAGE | {0, 1})
    return cases


def _fixtures(tmp: Path) -> None:
    (tmp / "log.txt").write_text("loading model\nRuntimeError: CUDA error: no kernel image is available\n")
    (tmp / "binary.log").write_bytes(bytes(range(256)) * 40)
    (tmp / "escapes.log").write_bytes(b"ok\n\x1b]52;c;ZWNobyBoaQ==\x07 error: \x1b]0;pwned\x07 \x1b[2J\x1b[31mred\n")
    os.mkfifo(tmp / "fifo")
    nested = tmp / "cfg-nested"
    nested.mkdir()
    (nested / "config.json").write_text("[" * 100_000 + "]" * 100_000)
    fifo_model = tmp / "fifo-model"
    fifo_model.mkdir()
    (fifo_model / "config.json").write_text(json.dumps({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
                                                        "num_attention_heads": 2, "vocab_size": 100}))
    os.mkfifo(fifo_model / "model.safetensors")
    shutil.copytree(fifo_model, os.fsdecode(bytes(tmp / "m") + b"\xff\xfe"), ignore=lambda *_: ["model.safetensors"])
    q99 = tmp / "q99-model"
    shutil.copytree(fifo_model, q99, ignore=lambda *_: ["model.safetensors"])
    header = json.dumps({"w": {"dtype": "Q99", "shape": [4], "data_offsets": [0, 4]}}).encode()
    (q99 / "model.safetensors").write_bytes(len(header).to_bytes(8, "little") + header + b"\0" * 4)
    (tmp / "lying.gguf").write_bytes(b"GGUF" + (3).to_bytes(4, "little") + (2**63).to_bytes(8, "little") + (1).to_bytes(8, "little") + b"\0" * 234)
    zero = tmp / "zero-model"
    zero.mkdir()
    os.symlink("/dev/zero", zero / "config.json")




def _case_names() -> list[str]:
    """The cases' names, known at collection so each case is its own test (`-k "replay fifo"` runs one alone, and
    pytest-xdist spreads them); the inputs themselves are built once per worker by `bad_inputs`."""
    with tempfile.TemporaryDirectory() as tmp:
        names = [name for name, _, _ in _cases(Path(tmp), Path(tmp) / "model")]
    assert len(names) == len(set(names)), "two bad-input cases share a name"
    return names


CASE_NAMES = _case_names()


@pytest.fixture(scope="module")
def bad_inputs(tmp_path_factory):
    root = tmp_path_factory.mktemp("bad-inputs")
    inputs, home, cwd = root / "in", root / "home", root / "cwd"
    for d in (inputs, home, cwd):
        d.mkdir()
    _fixtures(inputs)
    cases = {name: (args, codes) for name, args, codes in _cases(inputs, _model_dir(inputs))}
    server = DoctorForkServer(_env(home), cwd)  # each case a `python -m doctor` child of its own, forked from it
    yield inputs, home, cwd, cases, server
    server.close()


def _stat_snapshot(root: Path) -> dict:
    return {str(p): (p.lstat().st_size, p.lstat().st_mtime_ns) for p in sorted(root.rglob("*"))}


def test_there_are_enough_bad_inputs():
    assert len(CASE_NAMES) >= 150, len(CASE_NAMES)


@pytest.mark.parametrize("name", CASE_NAMES)
def test_bad_inputs_and_faults(bad_inputs, name):
    inputs, home, cwd, cases, server = bad_inputs
    args, codes = cases[name]
    before = _stat_snapshot(inputs)
    r = server.run(args, timeout=20)
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode in codes, f"{name}: exit {r.returncode} (expected {sorted(codes)}): {err.strip()[-300:]}"
    assert "Traceback" not in err and "internal error" not in err, f"{name}: {err.strip()[-300:]}"
    if name.startswith("explain escapes"):
        assert b"\x1b" not in r.stdout and b"\x07" not in r.stdout, "an escape sequence from the log reached the terminal"
    if name == "non-UTF-8 model name --json":
        json.loads(r.stdout.decode("utf-8"))  # valid JSON, whatever the path's bytes
    after = _stat_snapshot(inputs)
    written = [p for p in after if p not in before]
    assert all(p.endswith("out-nonutf8.json") for p in written), written
    assert {k: v for k, v in after.items() if k in before} == before  # inputs untouched: same size and mtime
    assert not list(cwd.iterdir())
    assert all(p.is_relative_to(home / ".cache") for p in home.rglob("*") if p.is_file())


@pytest.mark.parametrize("env", [{"PYTHONIOENCODING": "ascii"}, {"PYTHONIOENCODING": "latin-1"},
                                 {"LC_ALL": "C", "PYTHONUTF8": "0"}])
def test_output_encodings_fall_back_to_ascii(tmp_path, env):
    r = subprocess.run([sys.executable, "-m", "doctor", "--replay", str(FIXTURE)], capture_output=True,
                       env=_env(tmp_path, env), cwd=ROOT, timeout=30)
    assert r.returncode == 2 and b"Traceback" not in r.stderr, r.stderr
    assert "cuda-pairing" in r.stdout.decode("latin-1")


def test_a_full_disk_and_a_closed_pipe(tmp_path):
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-m", "doctor", "--replay", str(FIXTURE)], stdout=full, stderr=subprocess.PIPE,
                           env=_env(tmp_path), cwd=ROOT, timeout=30)
    assert r.returncode == 3 and b"No space left" in r.stderr
    p = subprocess.Popen([sys.executable, "-m", "doctor", "--replay", str(FIXTURE), "--json"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=_env(tmp_path), cwd=ROOT)
    p.stdout.close()  # like `| head -0`
    err = p.stderr.read()
    assert p.wait(timeout=30) in (0, 1, 2, 141) and b"Traceback" not in err and b"internal error" not in err, err


def _torch_children() -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and b"doctor.facts.python.torch_child" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            pass
    return found


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_an_interrupt_while_gathering_reaps_the_torch_child_and_writes_o(tmp_path, sig):
    fake = tmp_path / "site" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("import time\ntime.sleep(60)\n")  # an import that hangs
    out = tmp_path / "partial.json"
    env = _env(tmp_path, {"PYTHONPATH": f"{ROOT}{os.pathsep}{fake.parent}"})
    p = subprocess.Popen([sys.executable, "-m", "doctor", "--no-tui", "-o", str(out)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    deadline = time.monotonic() + 15
    while not any(_parent(c) == p.pid for c in _torch_children()) and time.monotonic() < deadline:
        time.sleep(0.05)
    p.send_signal(sig)
    _, err = p.communicate(timeout=20)
    assert p.returncode == 128 + sig, err
    assert b"Traceback" not in err
    assert json.loads(out.read_text())["schema"].startswith("v100-doctor/report/")
    time.sleep(0.2)
    assert not [c for c in _torch_children() if _parent(c) in (p.pid, 1)], "a torch child outlived the doctor"


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return -1


def test_the_installed_console_script(tmp_path):
    script = shutil.which("v100-doctor")
    if script is None:
        pytest.skip("v100-doctor is not installed on PATH")
    r = subprocess.run([script, "--gpu-split", "nan"], capture_output=True, env=_env(tmp_path), cwd=tmp_path, timeout=30)
    assert r.returncode == 3 and b"Traceback" not in r.stderr


@pytest.mark.parametrize("content", ["[]", "null", '"ok"', "1", '{"ok": true}', "{", "symlink"])
def test_a_bad_cache_entry_is_absent_and_replaced(tmp_path, content):
    from doctor.facts.python import torch_facts

    os.environ_backup = dict(os.environ)
    cache = tmp_path / "v100-doctor"
    cache.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("keep")
    entry = cache / "torch-k.json"
    if content == "symlink":
        os.symlink(victim, entry)
        os.symlink(victim, cache / "torch-k.json.tmp")
    else:
        entry.write_text(content)
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path)
    try:
        assert torch_facts.read_cache("k") is None
        torch_facts.write_cache("k", {"ok": True, "version": "2.1.2", "cuda": "12.1", "arch_list": ["sm_70"], "location": "/x"})
        assert torch_facts.read_cache("k")["version"] == "2.1.2"
    finally:
        if old is None:
            os.environ.pop("XDG_CACHE_HOME")
        else:
            os.environ["XDG_CACHE_HOME"] = old
    assert victim.read_text() == "keep" and not entry.is_symlink()
