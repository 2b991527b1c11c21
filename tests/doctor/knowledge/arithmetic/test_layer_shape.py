"""The decoder layer's shape, written once (layer_linears), and the callers that count from it."""

from types import SimpleNamespace

from doctor.knowledge.arithmetic.model_bytes import layer_linears, matrix_bytes


def test_llama_layer_matrices():
    got = layer_linears(hidden=4096, intermediate=14336, heads=32, kv_heads=8, head_dim=128)
    assert got == [("self_attn.q_proj", 4096, 4096), ("self_attn.k_proj", 4096, 1024), ("self_attn.v_proj", 4096, 1024),
                   ("self_attn.o_proj", 4096, 4096), ("mlp.gate_proj", 4096, 14336), ("mlp.up_proj", 4096, 14336),
                   ("mlp.down_proj", 14336, 4096)]
    assert sum(i * o for _, i, o in got) == 218_103_808  # Llama 3 8B: 32 layers x 218M + embeddings = 8.0B


def test_experts_repeat_the_mlp():
    one = layer_linears(1024, 2816, 8, 4, 128)
    four = layer_linears(1024, 2816, 8, 4, 128, experts=4)
    assert len(four) == 4 + 3 * 4 and four[:4] == one[:4]


def test_gptq_matrix_bytes():
    # 4-bit codes, an FP16 scale and a packed 4-bit zero per 128 rows and column, an int32 g_idx per row
    assert matrix_bytes("gptq", 4096, 1024, 4, 128) == 4096 * 1024 / 2 + 32 * 1024 * 2 + 32 * 1024 / 2 + 4096 * 4
    assert matrix_bytes("gptq", 4096, 1024, 4, 128, g_idx=False) == 4096 * 1024 / 2 + 32 * 1024 * 2 + 32 * 1024 / 2
    assert matrix_bytes("fp16", 4096, 1024, 16, 128) == 4096 * 1024 * 2


def test_the_synthetic_models_use_it():
    from doctor.probe.synthetic import GROUP, layer_bytes
    from doctor.probe.synthetic import LLAMA_8B_LIKE as s

    assert s.linears() == layer_linears(s.hidden, s.intermediate, s.heads, s.kv_heads, s.head_dim)
    manual = sum(i * o // 2 + (i // GROUP) * o * 2 + (i // GROUP) * (o // 8) * 4 + i * 4 for _, i, o in s.linears())
    assert layer_bytes(s, "gptq-act-order") == manual


def test_the_probes_bits_per_weight_counts_the_same_weights():
    from doctor.probe.worker import _layer_params

    config = SimpleNamespace(hidden_size=5120, intermediate_size=21760, num_attention_heads=40, num_key_value_heads=8,
                             head_dim=128)
    assert _layer_params(config) == sum(i * o for _, i, o in layer_linears(5120, 21760, 40, 8, 128))
    assert _layer_params(config) == 5120 * 5120 * 2 + 2 * 5120 * 1024 + 3 * 5120 * 21760
