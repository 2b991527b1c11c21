"""Write GGUF headers (metadata and tensor infos, no tensor data) for the GGUF reader and budget tests."""

from __future__ import annotations

import struct
from pathlib import Path

from doctor.model.ggml import BY_NAME


def _s(text: str) -> bytes:
    b = text.encode()
    return struct.pack("<Q", len(b)) + b


def _kv_u32(key: str, v: int) -> bytes:
    return _s(key) + struct.pack("<II", 4, v)


def _kv_str(key: str, v: str) -> bytes:
    return _s(key) + struct.pack("<I", 8) + _s(v)


def _kv_tokens(n: int) -> bytes:
    return _s("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, n) + b"".join(_s(f"t{i}") for i in range(n))


def use_more_bits(i: int, n: int) -> bool:
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def tensor_plan(layers: int, hidden: int, ff: int, vocab: int, heads: int, kv_heads: int, head_dim: int,
                tied: bool = False) -> list[tuple[str, tuple[int, ...], str]]:
    """llama.cpp's Q4_K_M mix (as /work/prep27/make_gguf.py writes it): (name, ggml dims ne0 first, type)."""
    q_out, kv_out = heads * head_dim, kv_heads * head_dim
    plan = [("token_embd.weight", (hidden, vocab), "Q4_K")]
    for i in range(layers):
        hi = "Q6_K" if use_more_bits(i, layers) else "Q4_K"
        p = f"blk.{i}."
        plan += [(p + "attn_norm.weight", (hidden,), "F32"), (p + "attn_q.weight", (hidden, q_out), "Q4_K"),
                 (p + "attn_k.weight", (hidden, kv_out), "Q4_K"), (p + "attn_v.weight", (hidden, kv_out), hi),
                 (p + "attn_output.weight", (q_out, hidden), "Q4_K"), (p + "ffn_norm.weight", (hidden,), "F32"),
                 (p + "ffn_gate.weight", (hidden, ff), "Q4_K"), (p + "ffn_up.weight", (hidden, ff), "Q4_K"),
                 (p + "ffn_down.weight", (ff, hidden), hi)]
    plan.append(("output_norm.weight", (hidden,), "F32"))
    if not tied:
        plan.append(("output.weight", (hidden, vocab), "Q6_K"))
    return plan


def write_gguf(path: Path, arch: str = "llama", layers: int = 4, hidden: int = 512, ff: int = 1536, vocab: int = 4096,
               heads: int = 8, kv_heads: int = 2, head_dim: int = 64, tied: bool = False, vocab_key: bool = False,
               tensors: list[tuple[str, tuple[int, ...], str]] | None = None,
               extra_u32: dict[str, int] | None = None) -> Path:
    """A GGUF v3 header for a llama-style decoder; `tensors` replaces the Q4_K_M plan."""
    kvs = [_kv_str("general.architecture", arch), _kv_str("general.name", "synthetic"), _kv_u32("general.file_type", 15),
           _kv_u32(f"{arch}.block_count", layers), _kv_u32(f"{arch}.embedding_length", hidden),
           _kv_u32(f"{arch}.feed_forward_length", ff), _kv_u32(f"{arch}.attention.head_count", heads),
           _kv_u32(f"{arch}.attention.head_count_kv", kv_heads), _kv_u32(f"{arch}.context_length", 32768)]
    kvs.append(_kv_u32(f"{arch}.vocab_size", vocab) if vocab_key else _kv_tokens(vocab))
    kvs += [_kv_u32(f"{arch}.{k}", v) for k, v in (extra_u32 or {}).items()]
    plan = tensors if tensors is not None else tensor_plan(layers, hidden, ff, vocab, heads, kv_heads, head_dim, tied)
    infos = b"".join(_s(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
                     + struct.pack("<IQ", BY_NAME[t].id, 0) for name, dims, t in plan)
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, len(plan), len(kvs)) + b"".join(kvs) + infos)
    return path
