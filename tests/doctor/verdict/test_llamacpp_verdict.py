"""The llama.cpp verdict: ceiling from the GGUF's bytes, the gap attributed for this engine, failures not judged."""

from __future__ import annotations

from doctor.knowledge.arithmetic.gguf_budget import quant_weights
from doctor.model.engine_probe import LlamaCppProbe
from doctor.model.gguf import GgufShape
from doctor.verdict.llamacpp import attribute

SHAPE = GgufShape("llama", 64, 5120, 21760, 40, 8, 128, 128, 152064)
W = quant_weights(SHAPE, "Q4_K_M")


def probe(**kw) -> LlamaCppProbe:
    base = dict(backend="llama-bench", outcome="ok", model_path="m.gguf", n_ctx=4096, flash_attn="on",
                median_tok_s=92.67, offloaded="offloaded 65/65 layers to GPU")
    return LlamaCppProbe(**{**base, **kw})


def test_h200_measurement_against_its_ceiling():
    v = attribute(probe(), SHAPE, W, 4800.0, "9.0")
    assert v.ceiling_tok_s == round(4800e9 / 15_901_040_640, 1)
    assert v.efficiency == round(92.67 / (4800e9 / 15_901_040_640), 3)
    assert "as llama.cpp does elsewhere" in v.summary  # 31% against the 27-31% of this project's own H200 row


SMALL = GgufShape("llama", 16, 2048, 8192, 32, 8, 64, 64, 8192)  # a 1B-like model


def test_a_small_model_is_judged_against_what_llama_cpp_reaches_at_its_size():
    """llama.cpp's fixed costs per layer and per token are most of a 1B model's time on an H200: 10% of its ceiling is
    llama.cpp as usual there (doctor/knowledge/decode_fixed_cost.py), while 10% for the 27B shape is not."""
    w = quant_weights(SMALL, "Q4_K_M")
    ceiling = attribute(probe(median_tok_s=100.0), SMALL, w, 4800.0, "9.0").ceiling_tok_s
    assert ceiling is not None
    small = attribute(probe(median_tok_s=0.10 * ceiling), SMALL, w, 4800.0, "9.0")
    assert "as llama.cpp does" in small.summary and small.expected_efficiency is not None
    assert 0.06 < small.expected_efficiency < 0.14 and "issue37-speed-model" in (small.expected_source or "")
    big = attribute(probe(median_tok_s=0.10 * 4800e9 / 15_901_040_640), SHAPE, W, 4800.0, "9.0")
    assert "below what llama.cpp reaches" in big.summary and big.expected_efficiency is not None
    assert big.expected_efficiency > 0.25


def test_v100_flash_attention_off_and_slow_run_are_named():
    v = attribute(probe(median_tok_s=20.0, flash_attn="off"), SHAPE, W, 900.0, "7.0", env={"GGML_CUDA_DISABLE_GRAPHS": "1"})
    texts = " ".join(c["text"] for c in v.causes)
    assert "flash attention off" in texts and "FP16 cuBLAS" in texts and "CUDA graphs are off" in texts
    assert "below what llama.cpp reaches" in v.summary and v.causes[-1]["cause"] == "unexplained"


def test_partial_offload_is_the_cause_and_no_gpu_ceiling_is_claimed():
    v = attribute(probe(median_tok_s=5.0, offloaded="offloaded 48/65 layers to GPU"), SHAPE, W, 900.0, "7.0")
    assert v.ceiling_tok_s is None and v.causes[0]["cause"] == "cpu-offload"


def test_a_silent_death_is_not_judged_as_slow():
    v = attribute(probe(outcome="died-silently", median_tok_s=None, error="the engine died with SIGSEGV"), SHAPE, W, 900, "7.0")
    assert v.outcome == "died-silently" and "not a slow engine" in v.summary and not v.causes
