"""The probe's pure parts: protocol lines, error recognition, host-state judgement, the JIT build
cache, the safetensors writer and the synthetic model's sizing."""

from __future__ import annotations

import io
import json
import os
import struct
import time

import pytest

from doctor.facts.engines.build_cache import extensions_root, inspect_cache
from doctor.knowledge.signatures import oom_figures, probe_failure_kind
from doctor.model.findings import Finding, Status
from doctor.model.probe_results import DecodePass, DecodeRun, ProbeReport
from doctor.model.units import GIB
from doctor.probe.hoststate import first_use, judge, wants_second_pass
from doctor.probe.protocol import Emitter, ProbeSpec, parse_event, spec_from_json, spec_to_json
from doctor.probe.safetensors_writer import TensorEntry, write_safetensors
from doctor.probe.synthetic import LLAMA_8B_LIKE, QWEN_27B_LIKE, layer_bytes, layers_for, target_bytes_for
from doctor.verdict.failures import failure_finding, merge_findings


def test_spec_round_trip_and_bad_spec():
    spec = ProbeSpec(model_path="/m", max_seq_len=8192, cache_mode="q8", gpu_split=(10.0, 14.0))
    assert spec_from_json(spec_to_json(spec)) == spec
    with pytest.raises(ValueError):
        spec_from_json('{"max_seq_len": 4}')


def test_emitter_writes_one_parseable_line_per_event():
    buf = io.StringIO()
    em = Emitter(buf)
    em.phase("load", "loading", 10)
    em.progress("load", 3, 10, "modules")
    lines = buf.getvalue().splitlines()
    assert [parse_event(x)["event"] for x in lines] == ["phase", "progress"]
    assert parse_event("## Warning: Flash Attention is installed") is None
    assert parse_event('{"event": "unknown"}') is None and parse_event("{broken") is None


@pytest.mark.parametrize("text, kind", [
    ("RuntimeError: FlashAttention only supports Ampere GPUs or newer.", "flash-attn"),
    ("CUDA error: no kernel image is available for execution on the device", "no-kernel-image"),
    ("RuntimeError: Error building extension 'exllamav2_ext': nvcc fatal : Unsupported gpu architecture 'compute_70'", "jit-build"),
    ("OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.", "jit-build"),
    ("RuntimeError: The detected CUDA version (13.0) mismatches the version that was used to compile PyTorch (12.1).", "jit-build"),
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.", "oom"),
    ("RuntimeError: Insufficient VRAM for model and cache", "oom"),
    ("ModuleNotFoundError: No module named 'tokenizers'", "not-installed"),
    ("ValueError:  ## No .safetensors files found in /models/Model [4.0bpw]", "model-load"),
    ("ZeroDivisionError: division by zero", "internal"),
    # two kinds in one text: the flash-attn crash names it, not the OOM text in the same traceback
    ("RuntimeError: FlashAttention only supports Ampere GPUs or newer.\nCUDA out of memory", "flash-attn"),
    ("Traceback (most recent call last):\n  File \"x.py\"\nValueError:  ## No .safetensors files found in /m [4.0bpw]\n"
     "  during handling", "model-load"),
])
def test_error_kinds(text, kind):
    assert probe_failure_kind(text) == kind


def test_oom_figures():
    text = "Tried to allocate 512.00 MiB. GPU 0 has a total capacity of 15.77 GiB of which 301.50 MiB is free."
    assert oom_figures(text) == {"tried_gib": 0.5, "capacity_gib": 15.77, "free_gib": 0.294}


@pytest.mark.parametrize("kind, check_id, status", [
    ("oom", "memory-budget", Status.FAIL), ("flash-attn", "flash-attn", Status.FAIL),
    ("no-kernel-image", "cuda-pairing", Status.FAIL), ("jit-build", "cuda-pairing", Status.FAIL),
    ("not-installed", "exllamav2-ready", Status.FAIL), ("model-load", "model-load", Status.FAIL),
    ("timeout", "probe", Status.FAIL), ("cancelled", "probe", Status.SKIP), ("internal", "probe", Status.ERROR),
])
def test_failures_map_to_the_pitfalls_check(kind, check_id, status):
    probe = ProbeReport(status="failed", summary="boom", error_kind=kind, error_phase="load",
                        error_detail="nvcc fatal : Unsupported gpu architecture 'compute_70'")
    f = failure_finding(probe, 8192)
    assert (f.id, f.status) == (check_id, status)
    assert f.evidence["phase"] == "load"
    if kind == "jit-build":
        assert "compute_70" in f.evidence["build_log_tail"]


def test_a_measured_finding_replaces_the_prediction_in_place():
    predicted = Finding(id="memory-budget", title="t", status=Status.PASS, summary="fits with 0.4 GB to spare")
    other = Finding(id="gpu-present", title="t", status=Status.PASS, summary="V100")
    measured = Finding(id="memory-budget", title="t", status=Status.FAIL, summary="did not fit")
    merged = merge_findings((other, predicted), [measured])
    assert [f.id for f in merged] == ["gpu-present", "memory-budget"]
    assert merged[1].status is Status.FAIL
    assert merged[1].evidence["predicted_before_probe"] == "pass: fits with 0.4 GB to spare"


def _pass(index, tok_s, faults=0, warm_tok_s=None, warm_faults=0):
    runs = tuple(DecodeRun(run=i, tokens=256, seconds=256 / tok_s, tok_s=tok_s, past_len=127, cpu_s=256 / tok_s,
                           cpu_wall=1.0, minor_faults=faults * 256, major_faults=0) for i in (1, 2, 3))
    warm_s = 256 / (warm_tok_s or tok_s)
    return DecodePass(index=index, load_s=3.0, warmup_tokens=256, warmup_s=warm_s, runs=runs, warmup_faults=warm_faults)


def test_the_h200_first_load_state_is_set_aside_and_the_clean_load_reported():
    slow, fast = _pass(1, 19.0, faults=270), _pass(2, 248.0)
    assert wants_second_pass("auto", slow) and not wants_second_pass("auto", fast)
    assert wants_second_pass("always", fast) and not wants_second_pass("never", slow)
    passes, reported = judge(slow, fast)
    assert reported == 2
    assert "270 minor page faults per token" in passes[0].flag and not passes[1].flag


def test_a_clean_but_much_slower_first_load_is_flagged_by_the_second():
    passes, reported = judge(_pass(1, 100.0), _pass(2, 200.0))
    assert reported == 2 and "50% below an independent second load" in passes[0].flag


def test_agreeing_loads_report_the_first():
    passes, reported = judge(_pass(1, 199.0), _pass(2, 201.0))
    assert reported == 1 and not passes[0].flag and not passes[1].flag


def test_first_use_cost_seen_in_the_warm_up():
    p = _pass(1, 150.0, warm_tok_s=16.5, warm_faults=256 * 270)
    assert "per-length first-use cost" in first_use(p)
    assert first_use(_pass(1, 150.0, warm_tok_s=140.0)) == ""


def test_build_cache_location_follows_torch(tmp_path):
    env = {"XDG_CACHE_HOME": str(tmp_path)}
    assert extensions_root("13.0", env, python=(3, 12), abiflags="") == tmp_path / "torch_extensions" / "py312_cu130"
    root = extensions_root("13.0", env)
    assert extensions_root("12.1", {"TORCH_EXTENSIONS_DIR": "/x"}) == type(root)("/x")
    cache = inspect_cache("13.0", env)
    assert not cache.built and cache.lock_age_s is None
    build = root / "exllamav2_ext"
    build.mkdir(parents=True)
    (build / "a.o").write_text("")
    (build / "lock").write_text("")
    os.utime(build / "lock", (time.time() - 3600, time.time() - 3600))
    cache = inspect_cache("13.0", env)
    assert cache.objects == 1 and cache.stale_lock and not cache.built
    (build / "exllamav2_ext.so").write_text("")
    assert inspect_cache("13.0", env).built


def test_a_build_older_than_the_installed_sources_will_rebuild(tmp_path, monkeypatch):
    import doctor.facts.engines.build_cache as eb

    env = {"XDG_CACHE_HOME": str(tmp_path)}
    build = extensions_root("13.0", env) / "exllamav2_ext"
    build.mkdir(parents=True)
    (build / "exllamav2_ext.so").write_text("")
    monkeypatch.setattr(eb, "newest_source_mtime", lambda: time.time() + 60)  # sources reinstalled after the build
    assert not inspect_cache("13.0", env).built


def test_safetensors_writer_streams_a_valid_file(tmp_path):
    entries = [TensorEntry("a", "F16", (2, 3), lambda fh, n: fh.write(b"\x00" * n)),
               TensorEntry("b", "I32", (4,), lambda fh, n: fh.write(struct.pack("<4i", 1, 2, 3, 4)))]
    path = tmp_path / "m.safetensors"
    assert write_safetensors(str(path), entries) == 12 + 16
    raw = path.read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    assert n % 8 == 0
    header = json.loads(raw[8:8 + n])
    assert header["b"] == {"dtype": "I32", "shape": [4], "data_offsets": [12, 28]}
    assert struct.unpack("<4i", raw[8 + n + 12:]) == (1, 2, 3, 4)


def test_synthetic_model_is_sized_for_the_card():
    # a 16 GB V100 with 15.5 GB free: half the free VRAM would be 7.75 GB, the cap of 6 GB wins
    assert target_bytes_for(15.5 * GIB, 60 * GIB, 500 * GIB) == 6 * GIB
    # little RAM: a quarter of it
    assert target_bytes_for(15.5 * GIB, 8 * GIB, 500 * GIB) == 2 * GIB
    layers = layers_for(6 * GIB, QWEN_27B_LIKE, "gptq")
    assert 25 <= layers <= 35
    assert layer_bytes(LLAMA_8B_LIKE, "fp16") == 2 * LLAMA_8B_LIKE.layer_params()
    assert layer_bytes(LLAMA_8B_LIKE, "gptq") < layer_bytes(LLAMA_8B_LIKE, "gptq-act-order") < layer_bytes(LLAMA_8B_LIKE, "fp16") / 3
