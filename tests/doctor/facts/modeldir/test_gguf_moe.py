"""A MoE GGUF's header: the expert_* keys, the routed experts' bytes per layer, and a decode step that reads only the
active experts (llama.cpp names the routed expert tensors blk.N.ffn_{gate,up,down}_exps)."""

from __future__ import annotations

from gguf_support import write_gguf

from doctor.facts.hub.quants import discover
from doctor.facts.modeldir.gguf_header import read_gguf
from doctor.knowledge.arithmetic.gguf_budget import GgufOption, gguf_budget, layer_read_bytes

H, FF, E, USED, LAYERS, VOCAB = 512, 512, 8, 2, 4, 4096
EXPERT_KEYS = {"expert_count": E, "expert_used_count": USED, "expert_feed_forward_length": FF}


def moe_tensors() -> list[tuple[str, tuple[int, ...], str]]:
    plan = [("token_embd.weight", (H, VOCAB), "Q4_K")]
    for i in range(LAYERS):
        p = f"blk.{i}."
        plan += [(p + "attn_norm.weight", (H,), "F32"), (p + "attn_q.weight", (H, H), "Q4_K"),
                 (p + "attn_k.weight", (H, 128), "Q4_K"), (p + "attn_v.weight", (H, 128), "Q6_K"),
                 (p + "attn_output.weight", (H, H), "Q4_K"), (p + "ffn_norm.weight", (H,), "F32"),
                 (p + "ffn_gate_inp.weight", (H, E), "F32"), (p + "ffn_gate_exps.weight", (H, FF, E), "Q4_K"),
                 (p + "ffn_up_exps.weight", (H, FF, E), "Q4_K"), (p + "ffn_down_exps.weight", (FF, H, E), "Q6_K")]
    return plan + [("output_norm.weight", (H,), "F32"), ("output.weight", (H, VOCAB), "Q6_K")]


def test_the_header_names_the_experts_and_their_bytes(tmp_path):
    g = read_gguf(write_gguf(tmp_path / "moe.gguf", arch="qwen3moe", layers=LAYERS, hidden=H, ff=FF,
                             tensors=moe_tensors(), extra_u32=EXPERT_KEYS))
    assert g.problem == ""
    s, w = g.shape, g.weights
    assert (s.n_expert, s.n_expert_used, s.n_ff_exp) == (E, USED, FF) and s.expert_read_share == USED / E
    experts = (2 * H * FF // 256 * 144 + FF * H // 256 * 210) * E
    assert w.layer_expert_bytes == (experts,) * LAYERS
    read = layer_read_bytes(s, w)
    assert all(r == b - experts * (1 - USED / E) for r, b in zip(read, w.layer_bytes))
    b = gguf_budget(s, w, GgufOption(n_ctx=4096))
    assert b.read_gpu_bytes < sum(w.layer_bytes)  # memory holds every expert, a token reads two of eight


def test_a_dense_header_reads_every_layer_whole(tmp_path):
    g = read_gguf(write_gguf(tmp_path / "dense.gguf"))
    assert g.weights.layer_expert_bytes == () and layer_read_bytes(g.shape, g.weights) == g.weights.layer_bytes


def test_plan_of_a_moe_gguf_plans_it_as_a_moe(tmp_path):
    path = write_gguf(tmp_path / "moe-Q4_K_M.gguf", arch="qwen3moe", layers=LAYERS, hidden=H, ff=FF,
                      tensors=moe_tensors(), extra_u32=EXPERT_KEYS)
    found = discover(str(path))
    c = found.config
    assert c.is_moe and (c.num_experts, c.num_experts_per_tok, c.moe_intermediate_size, c.moe_layers) == (E, USED, FF, LAYERS)
