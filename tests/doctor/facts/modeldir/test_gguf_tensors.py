"""The GGUF reader's tensor infos: shape keys, tensor bytes by placement, ggml-cuda's padded allocation."""

from __future__ import annotations

from gguf_support import write_gguf

from doctor.facts.modeldir.gguf_header import read_gguf

# the 4-layer 512/1536 Q4_K_M model of /work/prep27 (39 tensors): gguf 0.19.0 reads 10,140,672 tensor bytes
# (Q4_K 7,004,160, F32 18,432, Q6_K 3,118,080), and llama.cpp printed CPU_Mapped 1.12 MiB for token_embd
SMALL_TOTAL = 10_140_672


def test_shape_and_bytes_match_what_gguf_py_reads(tmp_path):
    g = read_gguf(write_gguf(tmp_path / "m.gguf"))
    assert g.problem == "" and g.tensor_count == 39
    s = g.shape
    assert (s.architecture, s.n_layer, s.n_embd, s.n_ff, s.n_head, s.n_head_kv, s.head_dim_k, s.n_vocab) == \
        ("llama", 4, 512, 1536, 8, 2, 64, 4096)
    w = g.weights
    assert w.total_bytes == SMALL_TOTAL
    assert w.bytes_by_type == {"Q4_K": 7_004_160, "F32": 18_432, "Q6_K": 3_118_080}
    assert w.embedding_bytes == 4096 * 512 // 256 * 144  # 1.125 MiB, printed as 1.12
    assert len(w.layer_bytes) == 4 and sum(w.layer_bytes) + w.embedding_bytes + w.output_bytes == SMALL_TOTAL


def test_cuda_allocation_pads_quantized_rows_to_512(tmp_path):
    # ffn_down's rows are 1792 long: ggml-cuda adds 256 elements (one Q4_K block, 144 B) per tensor
    plain = read_gguf(write_gguf(tmp_path / "a.gguf", ff=1536)).weights
    odd = read_gguf(write_gguf(tmp_path / "b.gguf", ff=1792)).weights
    assert plain.layer_alloc_bytes == plain.layer_bytes  # every row a multiple of 512, every size of 128
    extra = [a - b for a, b in zip(odd.layer_alloc_bytes, odd.layer_bytes)]
    assert all(e >= 144 for e in extra) and all(a % 128 == 0 for a in odd.layer_alloc_bytes)


def test_tied_head_is_duplicated_on_the_output_layer(tmp_path):
    w = read_gguf(write_gguf(tmp_path / "t.gguf", tied=True)).weights
    assert w.tied_output and w.output_bytes == w.embedding_bytes + 512 * 4


def test_vocab_from_its_key_and_a_header_without_shape(tmp_path):
    assert read_gguf(write_gguf(tmp_path / "v.gguf", vocab_key=True)).shape.n_vocab == 4096
    g = read_gguf(write_gguf(tmp_path / "n.gguf", arch="bert", tensors=[("x.weight", (512, 2), "F16")]))
    assert g.problem == "" and g.weights.total_bytes == 2048 and g.weights.other_bytes == 2048


def test_unknown_type_and_bad_row_are_problems_not_tracebacks(tmp_path):
    p = write_gguf(tmp_path / "u.gguf", tensors=[("blk.0.x", (512, 2), "F16")])
    data = bytearray(p.read_bytes())
    data[-12:-8] = (99).to_bytes(4, "little")  # the type id of the last tensor info
    p.write_bytes(bytes(data))
    assert "ggml type 99" in read_gguf(p).problem
    bad = read_gguf(write_gguf(tmp_path / "r.gguf", tensors=[("blk.0.x", (100, 2), "Q4_K")]))
    assert "not a multiple" in bad.problem


def test_truncated_tensor_infos(tmp_path):
    p = write_gguf(tmp_path / "cut.gguf")
    p.write_bytes(p.read_bytes()[:-40])
    assert "truncated" in read_gguf(p).problem
