"""The GGUF budget against what llama.cpp printed for the same shapes (CPU build; the device run checks CUDA)."""

from __future__ import annotations

import pytest
from gguf_support import write_gguf

from doctor.facts.modeldir.gguf_header import read_gguf
from doctor.knowledge.arithmetic.gguf_budget import (
    GgufOption,
    compute_buffer_bytes,
    decode_ceiling,
    gguf_budget,
    kv_cache_bytes,
    quant_weights,
)
from doctor.model.gguf import GgufShape

MIB = 1024 * 1024

# llama.cpp (llama-cpp-python 0.3.36's vendored copy, CPU build) loading the 4-layer 512/1536 Q4_K_M model:
# (n_ctx, K/V type) -> KV MiB as printed (/work/prep27/results/cpu-validation/probe_cpu_small.json)
PRINTED_KV = [(4096, "f16", 8.0), (32768, "f16", 64.0), (8192, "f16", 16.0), (1000, "f16", 2.0), (4096, "q8_0", 4.25),
              (4096, "q4_0", 2.25), (16384, "q8_0", 17.0)]
# the synthetic 27B-shape Q4_K_M on the H200, every layer offloaded: (n_ctx, K/V, flash attention, n_ubatch) ->
# (CUDA0 compute MiB, CUDA_Host compute MiB, CUDA0 KV MiB) as printed (benchmarks/results/issue27-llamacpp/)
PRINTED_CUDA = [
    (4096, "f16", True, 512, 307.0, 24.01, 1024.0), (32768, "f16", True, 512, 307.0, 52.01, 8192.0),
    (8192, "q8_0", True, 512, 307.0, 28.09, 1088.0), (4096, "f16", False, 512, 372.01, 32.01, 1024.0),
    (128, "f16", True, 512, 76.75, 5.07, 64.0),  # llama-bench tg128: its context is the 128 generated tokens
]
SHAPE_27B = GgufShape("llama", 64, 5120, 21760, 40, 8, 128, 128, 152064)
# the same shape with vocab 8192 (issue 28's synthetic GGUFs, Q4_K_M and Q4_0), where the logits phase is small:
# (n_ctx, K/V, CUDA0 compute MiB, CUDA_Host compute MiB) as printed (benchmarks/results/issue28-accuracy/)
PRINTED_CUDA_V8192 = [(4096, "f16", 161.51, 24.01), (16384, "f16", 173.51, 36.01), (32768, "f16", 189.51, 52.01),
                      (16384, "q4_0", 173.59, 36.09), (32768, "q8_0", 200.09, 52.09)]
SHAPE_27B_V8192 = GgufShape("llama", 64, 5120, 21760, 40, 8, 128, 128, 8192)


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    return read_gguf(write_gguf(tmp_path_factory.mktemp("g") / "small.gguf"))


@pytest.mark.parametrize("n_ctx,kv_type,kv_mib", PRINTED_KV)
def test_kv_is_exactly_what_llama_cpp_printed(small, n_ctx, kv_type, kv_mib):
    assert kv_cache_bytes(small.shape, n_ctx, kv_type, kv_type) / MIB == kv_mib


@pytest.mark.parametrize("n_ctx,kv_type,fa,ub,gpu_mib,host_mib,kv_mib", PRINTED_CUDA)
def test_cuda_buffers_within_the_printed_figures(n_ctx, kv_type, fa, ub, gpu_mib, host_mib, kv_mib):
    gpu, host = compute_buffer_bytes(SHAPE_27B, n_ctx, ub, fa, kv_type != "f16")
    assert abs(gpu / MIB - gpu_mib) <= gpu_mib * 0.03 and abs(host / MIB - host_mib) <= host_mib * 0.03
    assert kv_cache_bytes(SHAPE_27B, n_ctx, kv_type, kv_type) / MIB == kv_mib


@pytest.mark.parametrize("n_ctx,kv_type,gpu_mib,host_mib", PRINTED_CUDA_V8192)
def test_cuda_compute_with_a_small_vocabulary(n_ctx, kv_type, gpu_mib, host_mib):
    """Issue 27's logits-phase formula said 26 MiB for these (84-87% under): the feed-forward phase, the mask's GPU
    copy and, with quantized K/V, the cache converted to f16 for the prompt's attention are larger here."""
    gpu, host = compute_buffer_bytes(SHAPE_27B_V8192, n_ctx, 512, True, kv_type != "f16")
    assert abs(gpu / MIB - gpu_mib) <= gpu_mib * 0.03 and abs(host / MIB - host_mib) <= host_mib * 0.03


def test_full_offload_places_everything_but_the_embedding(small):
    b = gguf_budget(small.shape, small.weights, GgufOption(n_ctx=4096))
    w = small.weights
    assert b.layers_on_gpu == 4 and b.output_on_gpu and b.offloaded_text == "offloaded 5/5 layers to GPU"
    assert b.model_host_bytes == w.embedding_bytes
    assert b.model_gpu_bytes == sum(w.layer_alloc_bytes) + w.output_alloc_bytes
    assert b.kv_host_bytes == 0 and b.gpu_bytes == b.model_gpu_bytes + b.kv_gpu_bytes + b.compute_gpu_bytes


def test_partial_offload_keeps_the_first_layers_and_their_cache_on_the_host(small):
    b = gguf_budget(small.shape, small.weights, GgufOption(n_ctx=4096, n_gpu_layers=3))
    assert b.offloaded_text == "offloaded 3/5 layers to GPU" and not b.output_on_gpu
    assert b.kv_gpu_bytes == 3 * b.kv_host_bytes  # 3 layers' cache on the GPU, 1 on the host
    assert b.model_gpu_bytes == sum(small.weights.layer_alloc_bytes[1:])
    with pytest.raises(ValueError, match="host"):
        decode_ceiling(b, 900)
    full = decode_ceiling(gguf_budget(small.shape, small.weights, GgufOption(n_ctx=4096)), 900, 50)
    assert decode_ceiling(b, 900, 50) < full


def test_ceiling_is_bandwidth_over_bytes_and_falls_with_position(small):
    b = gguf_budget(small.shape, small.weights, GgufOption(n_ctx=4096))
    assert decode_ceiling(b, 900) == pytest.approx(900e9 / b.read_gpu_bytes)
    assert decode_ceiling(b, 900, position=4000, shape=small.shape) < decode_ceiling(b, 900)


def test_the_27b_shape_on_a_16gb_card():
    # the synthetic 27B (64 x 5120/21760, 40/8 heads, vocab 152064) of the H200 run: 16,338,984,960 tensor bytes
    shape = GgufShape("qwen2", 64, 5120, 21760, 40, 8, 128, 128, 152064)
    w = quant_weights(shape, "Q4_K_M")
    assert w.total_bytes == 16_338_984_960
    b = gguf_budget(shape, w, GgufOption(n_ctx=4096))
    assert b.read_gpu_bytes == 15_901_040_640  # the GPU bytes per token the H200 notes count
    assert round(b.model_gpu_bytes / MIB, 2) == 15164.43  # llama.cpp printed "CUDA0 model buffer size = 15164.43 MiB"
    assert round(b.model_host_bytes / MIB, 2) == 417.66  # and "CPU_Mapped model buffer size = 417.66 MiB"
    assert b.kv_gpu_bytes == 1024 * MIB
    assert b.gpu_bytes > 16 * 1024 * MIB  # does not fit a 16 GB card whole


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="cache type"):
        GgufOption(n_ctx=4096, cache_type_k="q3_k")
    with pytest.raises(ValueError):
        GgufOption(n_ctx=0)
    with pytest.raises(ValueError, match="mix"):
        quant_weights(GgufShape("llama", 1, 256, 256, 2, 2, 128, 128, 256), "IQ9")
