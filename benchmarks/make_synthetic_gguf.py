"""Write a synthetic llama-architecture GGUF of a given shape, without any real weights.

Decode speed depends on the bytes and the kernels, not on the values, so quantized blocks of
random bytes measure what llama.cpp reaches on a card. The fp16 scales inside each block are
overwritten with small finite values (no NaN/inf), the norms are ones, and the vocabulary is a
minimal SentencePiece ("llama") one: <unk> <s> </s>, the 256 byte tokens <0x00>..<0xFF>
(llama.cpp looks up <0x0A> for its line-feed token) and filler pieces up to --vocab.

Quant mixes (what llama.cpp's quantizer would pick for the same shape):
  q4_k_m: Q4_K everywhere; Q6_K for output.weight and for attn_v/ffn_down on the
          layers where llama.cpp's use_more_bits(i, n) is true (half of them).
  q4_k:   Q4_K everywhere, output.weight Q6_K (llama.cpp's Q4_K_S keeps a few more Q5_K).
  q4_0:   Q4_0 everywhere, output.weight Q6_K.

Needs numpy and the `gguf` package (pure Python). Usage:
  python3 make_gguf.py --out /tmp/m/synth.gguf --layers 64 --mix q4_k_m
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np
from gguf import GGML_QUANT_SIZES, GGUFWriter, LlamaFileType, TokenType
from gguf import GGMLQuantizationType as Q

FILE_TYPE = {"q4_k_m": LlamaFileType.MOSTLY_Q4_K_M, "q4_k": LlamaFileType.MOSTLY_Q4_K_S, "q4_0": LlamaFileType.MOSTLY_Q4_0}
# byte offset of each fp16 scale inside one block, per type
F16_FIELDS = {Q.Q4_K: (0, 2), Q.Q6_K: (208,), Q.Q4_0: (0,), Q.Q8_0: (0,), Q.Q5_K: (0, 2)}


def use_more_bits(i: int, n: int) -> bool:
    """llama.cpp src/llama-quant.cpp: the layers that Q4_K_M gives Q6_K for attn_v and ffn_down."""
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def tensor_plan(a: argparse.Namespace) -> list[tuple[str, tuple[int, ...], Q]]:
    """(name, numpy-order shape, type) in file order. numpy order is (ne1, ne0): rows, then row length."""
    h, ff, v = a.hidden, a.ff, a.vocab
    q_out, kv_out = a.heads * a.head_dim, a.kv_heads * a.head_dim
    base = Q.Q4_0 if a.mix == "q4_0" else Q.Q4_K
    plan: list[tuple[str, tuple[int, ...], Q]] = [("token_embd.weight", (v, h), base)]
    for i in range(a.layers):
        more = a.mix == "q4_k_m" and use_more_bits(i, a.layers)
        hi = Q.Q6_K if more else base
        p = f"blk.{i}."
        plan += [(p + "attn_norm.weight", (h,), Q.F32),
                 (p + "attn_q.weight", (q_out, h), base),
                 (p + "attn_k.weight", (kv_out, h), base),
                 (p + "attn_v.weight", (kv_out, h), hi),
                 (p + "attn_output.weight", (h, q_out), base),
                 (p + "ffn_norm.weight", (h,), Q.F32),
                 (p + "ffn_gate.weight", (ff, h), base),
                 (p + "ffn_up.weight", (ff, h), base),
                 (p + "ffn_down.weight", (h, ff), hi)]
    plan += [("output_norm.weight", (h,), Q.F32), ("output.weight", (v, h), Q.Q6_K)]
    return plan


def nbytes(shape: tuple[int, ...], qtype: Q) -> int:
    block, size = GGML_QUANT_SIZES[qtype]
    n = int(np.prod(shape))
    assert shape[-1] % block == 0, (shape, qtype)
    return n // block * size


class BlockPool:
    """Random blocks of one quant type with finite fp16 scales; tensors are block-aligned slices of it."""

    def __init__(self, qtype: Q, max_bytes: int, rng: np.random.Generator):
        block, size = GGML_QUANT_SIZES[qtype]
        self.size = size
        n_blocks = max_bytes // size + 65536  # slack for random offsets
        raw = np.frombuffer(rng.bytes(n_blocks * size), dtype=np.uint8).copy().reshape(n_blocks, size)
        for off in F16_FIELDS[qtype]:
            # small positive scales: weights stay O(0.1), activations stay finite
            scales = rng.uniform(2e-4, 6e-4, size=n_blocks).astype("<f2")
            raw[:, off:off + 2] = scales.view(np.uint8).reshape(n_blocks, 2)
        self.data = raw.reshape(-1)
        self.n_blocks = n_blocks
        self.rng = rng

    def slice(self, n: int) -> np.ndarray:
        blocks = n // self.size
        start = int(self.rng.integers(0, self.n_blocks - blocks + 1)) * self.size
        return self.data[start:start + n]


def vocab(n: int) -> tuple[list[str], list[float], list[int]]:
    toks = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [TokenType.UNKNOWN, TokenType.CONTROL, TokenType.CONTROL] + [TokenType.BYTE] * 256
    filler = n - len(toks)
    toks += [f"\u2581t{i}" for i in range(filler)]
    types += [TokenType.NORMAL] * filler
    scores = [0.0] * 259 + [-float(i) for i in range(filler)]
    return toks, scores, [int(t) for t in types]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--layers", type=int, default=64)
    ap.add_argument("--hidden", type=int, default=5120)
    ap.add_argument("--ff", type=int, default=21760)
    ap.add_argument("--heads", type=int, default=40)
    ap.add_argument("--kv-heads", type=int, default=8)
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--vocab", type=int, default=152064)
    ap.add_argument("--ctx-train", type=int, default=32768)
    ap.add_argument("--mix", choices=sorted(FILE_TYPE), default="q4_k_m")
    ap.add_argument("--seed", type=int, default=27)
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)

    plan = tensor_plan(a)
    rng = np.random.default_rng(a.seed)
    biggest: dict[Q, int] = {}
    for _, shape, qt in plan:
        if qt != Q.F32:
            biggest[qt] = max(biggest.get(qt, 0), nbytes(shape, qt))
    pools = {qt: BlockPool(qt, b, rng) for qt, b in biggest.items()}
    ones = {a.hidden: np.ones(a.hidden, dtype=np.float32)}
    t_pool = time.perf_counter() - t0

    w = GGUFWriter(a.out, "llama")
    w.add_name(f"synthetic-{a.layers}L-{a.hidden}-{a.ff}-{a.mix}")
    w.add_file_type(int(FILE_TYPE[a.mix]))
    w.add_vocab_size(a.vocab)
    w.add_context_length(a.ctx_train)
    w.add_embedding_length(a.hidden)
    w.add_block_count(a.layers)
    w.add_feed_forward_length(a.ff)
    w.add_head_count(a.heads)
    w.add_head_count_kv(a.kv_heads)
    w.add_key_length(a.head_dim)
    w.add_value_length(a.head_dim)
    w.add_rope_dimension_count(a.head_dim)
    w.add_rope_freq_base(1_000_000.0)
    w.add_layer_norm_rms_eps(1e-6)
    toks, scores, types = vocab(a.vocab)
    w.add_tokenizer_model("llama")
    w.add_token_list(toks)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)
    w.add_add_bos_token(True)
    for name, shape, qt in plan:
        if qt == Q.F32:
            w.add_tensor_info(name, shape, np.dtype(np.float32), int(np.prod(shape)) * 4)
        else:
            w.add_tensor_info(name, shape, np.dtype(np.float32), nbytes(shape, qt), raw_dtype=qt)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    total = 0
    for name, shape, qt in plan:
        if qt == Q.F32:
            arr = ones[shape[0]]
        else:
            arr = pools[qt].slice(nbytes(shape, qt))
        w.write_tensor_data(arr)
        total += arr.nbytes
    w.close()
    dt = time.perf_counter() - t0
    summary = {"out": a.out, "file_bytes": os.path.getsize(a.out), "tensor_bytes": total, "n_tensors": len(plan),
               "shape": {k: getattr(a, k) for k in ("layers", "hidden", "ff", "heads", "kv_heads", "head_dim", "vocab")},
               "mix": a.mix, "pool_s": round(t_pool, 2), "total_s": round(dt, 2),
               "write_GBps": round(os.path.getsize(a.out) / dt / 1e9, 2)}
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
