"""The Transformers probe: its real child run against stand-in torch/transformers/bitsandbytes modules (CPU, no
torch here), its parent's outcomes (ok, silent death, the engine's error, timeout, not installed), the bytes read
per token, and the synthetic GGUF of the same shape that the engine gap measures llama.cpp on. One gpu test runs the
real thing."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from doctor.facts.modeldir.gguf_header import read_gguf
from doctor.probe import synthetic_gguf
from doctor.probe.engine_gap import gguf_read_bytes, shape_of
from doctor.probe.synthetic import QWEN_27B_LIKE, Shape
from doctor.probe.transformers import TransformersOptions, read_events, run_child

FAKES = Path(__file__).parent / "probe_fakes" / "fake_hf"
ROOT = Path(__file__).resolve().parents[3]
NO_SAMPLER = {"sampler": lambda index, pid: None}
QUICK = TransformersOptions(prompt=4, warmup=8, tokens=16, runs=3, timeout_s=60, settle_pct=1000.0)  # exactly 3 runs


def fake_env(tmp_path, bnb: bool = True, **extra: str) -> dict:
    """PYTHONPATH with the stand-ins first (bitsandbytes left out when not wanted), the repo after them."""
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    for name in ("torch", "transformers") + (("bitsandbytes",) if bnb else ()):
        if not (site / name).exists():
            (site / name).symlink_to(FAKES / name)
    return {"PYTHONPATH": f"{site}{os.pathsep}{ROOT}", "FAKE_STEP_S": "0.002", **extra}


def test_the_child_measures_nf4_through_the_protocol(tmp_path):
    p = run_child(str(tmp_path), QUICK, extra_env=fake_env(tmp_path), **NO_SAMPLER)
    assert p.outcome == "ok", (p.error, p.log_tail)
    assert p.backend == "transformers+bitsandbytes" and p.quant == "nf4" and p.versions["transformers"] == ""
    assert len(p.runs) == 3 and all(r.tokens == 16 for r in p.runs)
    assert p.median_tok_s and 50 < p.median_tok_s < 600  # 2 ms a step, plus the host's own time
    assert p.wall_vs_perf_pct is not None and abs(p.wall_vs_perf_pct) < 5  # both clocks around the same steps
    assert p.warmup_tok_s and p.warmup_faults_per_token is not None and len(p.faults_per_token) == 3
    # on the card: the embedding 4096x512x2, packed 4-bit 393216 B, absmax 12288x4, code 16x4, a buffer 64x4;
    # per token: all of it less the embedding but one row of it (512 x 2)
    total = 4096 * 512 * 2 + 393216 + 12288 * 4 + 16 * 4 + 64 * 4
    assert p.gpu_weight_bytes == total and p.bytes_per_token == total - 4096 * 512 * 2 + 1024
    assert p.layers == 3


def test_without_bitsandbytes_it_measures_fp16(tmp_path):
    p = run_child(str(tmp_path), QUICK, extra_env=fake_env(tmp_path, bnb=False), **NO_SAMPLER)
    assert p.outcome == "ok" and p.backend == "transformers" and p.quant == "fp16"
    assert p.bytes_per_token == 1536 * 512 * 2 + 64 * 4 + 1024


def test_nf4_asked_without_bitsandbytes_is_not_installed(tmp_path):
    p = run_child(str(tmp_path), TransformersOptions(quant="nf4"), extra_env=fake_env(tmp_path, bnb=False), **NO_SAMPLER)
    assert p.outcome == "not-installed" and "bitsandbytes" in p.error


def test_an_older_transformers_gets_torch_dtype(tmp_path):
    p = run_child(str(tmp_path), QUICK, extra_env=fake_env(tmp_path, FAKE_TRANSFORMERS_VERSION="4.46.3"), **NO_SAMPLER)
    assert p.outcome == "ok", p.error


@pytest.mark.parametrize("fail,outcome,words", [("oom", "error", "oom: CUDA out of memory. Tried to allocate 2.00 GiB"),
                                                ("load", "error", "model-load: ValueError: Unrecognized configuration"),
                                                ("decode", "error", "engine: RuntimeError: CUDA error: an illegal memory")])
def test_the_engines_own_errors_are_one_line(tmp_path, fail, outcome, words):
    p = run_child(str(tmp_path), QUICK, extra_env=fake_env(tmp_path, FAKE_HF_FAIL=fail), **NO_SAMPLER)
    assert p.outcome == outcome and p.error.startswith(words) and "\n" not in p.error and p.median_tok_s is None


def test_no_cuda_and_no_torch(tmp_path):
    p = run_child(str(tmp_path), QUICK, extra_env=fake_env(tmp_path, FAKE_NO_CUDA="1"), **NO_SAMPLER)
    assert p.outcome == "error" and p.error.startswith("no-cuda")
    bare = run_child(str(tmp_path), QUICK, extra_env={"PYTHONPATH": str(ROOT)}, **NO_SAMPLER)
    assert bare.outcome == "not-installed" and "Transformers (with torch) is not importable" in bare.error


def fake_python(tmp_path, body: str) -> str:
    p = tmp_path / "python"
    p.write_text(f"#!/bin/sh\necho 'loading checkpoint shards' >&2\n{body}\n")
    p.chmod(p.stat().st_mode | stat.S_IEXEC)
    return str(p)


def test_a_silent_death_and_a_timeout(tmp_path):
    dead = run_child("/m", QUICK, python=fake_python(tmp_path, "kill -SEGV $$"), **NO_SAMPLER)
    assert dead.outcome == "died-silently" and "SIGSEGV" in dead.error and "loading checkpoint shards" in dead.error
    slow = run_child("/m", TransformersOptions(timeout_s=1), python=fake_python(tmp_path, "sleep 5"), **NO_SAMPLER)
    assert slow.outcome == "timeout"


def test_settling_drops_a_slow_first_run():
    lines = [json.dumps({"event": "sample", "run": i, "tokens": 128, "tok_s_wall": w, "tok_s_perf": w * 1.01})
             for i, w in enumerate((2.0, 4.0, 4.1, 3.9))] + ['{"event": "done"}', "stray print"]
    got = read_events(lines)
    assert got["done"] and [r.tok_s_wall for r in got["runs"]] == [2.0, 4.0, 4.1, 3.9]
    from doctor.model.engine_probe import TransformersProbe
    from doctor.probe.transformers import summarize

    p = summarize(TransformersProbe("transformers", "ok", "m"), got["runs"])
    assert p.dropped_runs == 1 and p.median_tok_s == 4.0 and p.wall_vs_perf_pct == round(100 * (1 / 1.01 - 1), 2)


def test_the_synthetic_gguf_reads_back_with_its_shape(tmp_path):
    pytest.importorskip("numpy")  # the synthetic model's blocks are drawn with numpy, which the test extra does not install
    shape = Shape(hidden=512, intermediate=1536, heads=8, kv_heads=2, head_dim=64, layers=4, vocab=600)
    g = synthetic_gguf.write(str(tmp_path / "m.gguf"), shape)
    f = read_gguf(g.path)
    assert f.shape is not None and f.weights is not None
    assert (f.shape.n_layer, f.shape.n_embd, f.shape.n_ff, f.shape.n_head, f.shape.n_head_kv, f.shape.n_vocab) == \
        (4, 512, 1536, 8, 2, 600)
    assert f.weights.bytes_by_type == {"Q4_K": 5997312, "F32": 18432, "Q6_K": 1649760}  # Q4_K_M: layers 0 and 3 Q6_K
    data = sum(f.weights.bytes_by_type.values())
    assert data < g.file_bytes < data + 64 * 1024 + 600 * 40  # the header and the vocabulary, padding
    assert gguf_read_bytes(g.path) == data - 600 * 512 // 256 * 144  # all but token_embd


def test_the_27b_layer_shape_splits_into_k_quant_blocks():
    plan = synthetic_gguf.tensor_plan(QWEN_27B_LIKE)
    assert all(synthetic_gguf.nbytes(dims, t) > 0 for _, dims, t in plan)
    with pytest.raises(ValueError):
        synthetic_gguf.nbytes((5000, 10), "Q4_K")


def test_shape_of_a_model_dir(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"hidden_size": 5120, "intermediate_size": 21760,
                                                      "num_attention_heads": 40, "num_key_value_heads": 8,
                                                      "num_hidden_layers": 64, "vocab_size": 152064}))
    assert shape_of(str(tmp_path)) == Shape(5120, 21760, 40, 8, 128, 64, 152064)


@pytest.mark.gpu
def test_transformers_on_the_gpu(tmp_path):
    """The real engine on a 2-layer synthetic 27B-shape model (needs torch, transformers and tokenizers)."""
    pytest.importorskip("transformers")
    from doctor.probe.transformers import synthetic_model

    m = synthetic_model(str(tmp_path / "m"), 2)
    p = run_child(m.path, TransformersOptions(prompt=16, warmup=16, tokens=32, runs=3, timeout_s=300))
    assert p.outcome == "ok", (p.error, p.log_tail)
    assert p.median_tok_s and p.median_tok_s > 1 and p.bytes_per_token and p.bytes_per_token > 2 * 390e6 * 0.5
    assert p.wall_vs_perf_pct is not None and abs(p.wall_vs_perf_pct) < 3


def test_the_same_shape_in_two_engines_end_to_end(tmp_path, monkeypatch):
    """What the device runs (probe --engine transformers --synthetic --compare-engines), on CPU: the synthetic FP16
    model written (a stand-in tokenizer: tokenizers is not installed here), the stand-in Transformers probed through
    its real child, a real Q4_K_M GGUF of the same shape written and handed to a stand-in llama-bench."""
    pytest.importorskip("numpy")
    from doctor.probe import engine_gap, synthetic

    def tokenizer(out_dir, files, vocab_size):
        (out_dir / "tokenizer.json").write_text("{}")
        return 512

    monkeypatch.setattr(synthetic, "train_tokenizer", tokenizer)
    for key, value in fake_env(tmp_path).items():
        monkeypatch.setenv(key, value)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    bench = bindir / "llama-bench"
    row = {"n_prompt": 0, "n_gen": 16, "samples_ts": [310.0, 312.0, 311.0]}
    bench.write_text("#!/bin/sh\necho 'load_tensors: offloaded 3/3 layers to GPU' >&2\n"
                     f"echo '{json.dumps(row)}'\necho \"$@\" > {tmp_path / 'bench-args'}\n")
    bench.chmod(bench.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    said: list[str] = []
    doc = engine_gap.measure_same_shape(str(tmp_path / "work"), None, 2, QUICK, True, said.append, synthetic.TINY)
    t, llama = doc["measurements"][0], doc["measurements"][1]
    assert doc["transformers"].outcome == "ok" and t.engine == "transformers" and t.format == "bitsandbytes NF4"
    assert (llama.engine, llama.outcome, llama.tok_s, llama.format) == ("llama.cpp", "ok", 311.0, "Q4_K_M GGUF")
    gguf = (tmp_path / "bench-args").read_text().split()[1]
    f = read_gguf(gguf)
    assert f.shape is not None and (f.shape.n_layer, f.shape.n_embd, f.shape.n_ff, f.shape.n_vocab) == (2, 1024, 2816, 512)
    assert llama.bytes_per_token == gguf_read_bytes(gguf) and len(doc["measurements"]) == 2  # no exllamav2 here
    assert any("Q4_K_M GGUF of the same shape" in s for s in said)
