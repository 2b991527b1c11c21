"""A random-weight llama GGUF of a given layer shape, written without llama.cpp or the `gguf` package.

The engine gap is measured on the same shape in each engine's own format: the synthetic FP16 Llama
(doctor/probe/synthetic.py) for Transformers and ExLlamaV2, this file for llama.cpp. Decode speed depends on the
bytes and the kernels, not the values, so the quantized blocks are random bytes with their fp16 scales overwritten
by small finite values (no NaN/inf); norms are ones. The mix is llama.cpp's Q4_K_M: Q4_K everywhere, Q6_K for
output.weight and for attn_v/ffn_down on the layers where llama-quant.cpp's use_more_bits(i, n) holds. The
vocabulary is a minimal SentencePiece one (<unk> <s> </s>, the 256 byte tokens, filler pieces), as
benchmarks/make_synthetic_gguf.py writes it (that file, with the `gguf` package, made the model of the device
run in benchmarks/results/issue27-llamacpp/).

GGUF v3 layout: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from doctor.model.ggml import BY_NAME
from doctor.probe.synthetic import Shape

ALIGN = 32
SCALE_OFFSETS = {"Q4_K": (0, 2), "Q6_K": (208,)}  # byte offsets of the fp16 scales inside one block
U32, I32, F32, BOOL, STRING, ARRAY = 4, 5, 6, 7, 8, 9


def use_more_bits(i: int, n: int) -> bool:
    """llama.cpp src/llama-quant.cpp: the layers whose attn_v and ffn_down Q4_K_M keeps in Q6_K."""
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def tensor_plan(shape: Shape) -> list[tuple[str, tuple[int, ...], str]]:
    """(name, ggml dims with ne0 first, type) in file order, Q4_K_M."""
    h, ff, v = shape.hidden, shape.intermediate, shape.vocab
    q_out, kv_out = shape.heads * shape.head_dim, shape.kv_heads * shape.head_dim
    plan: list[tuple[str, tuple[int, ...], str]] = [("token_embd.weight", (h, v), "Q4_K")]
    for i in range(shape.layers):
        hi = "Q6_K" if use_more_bits(i, shape.layers) else "Q4_K"
        p = f"blk.{i}."
        plan += [(p + "attn_norm.weight", (h,), "F32"), (p + "attn_q.weight", (h, q_out), "Q4_K"),
                 (p + "attn_k.weight", (h, kv_out), "Q4_K"), (p + "attn_v.weight", (h, kv_out), hi),
                 (p + "attn_output.weight", (q_out, h), "Q4_K"), (p + "ffn_norm.weight", (h,), "F32"),
                 (p + "ffn_gate.weight", (h, ff), "Q4_K"), (p + "ffn_up.weight", (h, ff), "Q4_K"),
                 (p + "ffn_down.weight", (ff, h), hi)]
    return plan + [("output_norm.weight", (h,), "F32"), ("output.weight", (h, v), "Q6_K")]


def nbytes(dims: tuple[int, ...], type_name: str) -> int:
    t = BY_NAME[type_name]
    n = 1
    for d in dims:
        n *= d
    if dims[0] % t.block:
        raise ValueError(f"a row of {dims[0]} does not split into {type_name} blocks of {t.block}")
    return n // t.block * t.block_bytes


def _s(text: str) -> bytes:
    b = text.encode()
    return struct.pack("<Q", len(b)) + b


def _kv(key: str, kind: int, value: object) -> bytes:
    fmt = {U32: "<I", I32: "<i", F32: "<f", BOOL: "<?"}
    body = _s(str(value)) if kind == STRING else struct.pack(fmt[kind], value)
    return _s(key) + struct.pack("<I", kind) + body


def _array(key: str, kind: int, values: list) -> bytes:
    if kind == STRING:
        body = b"".join(_s(v) for v in values)
    else:
        body = struct.pack(f"<{len(values)}{ {F32: 'f', I32: 'i'}[kind] }", *values)
    return _s(key) + struct.pack("<IIQ", ARRAY, kind, len(values)) + body


def metadata(shape: Shape, name: str) -> list[bytes]:
    n_fill = shape.vocab - 259
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)] + [f"\u2581t{i}" for i in range(n_fill)]
    types = [2, 3, 3] + [6] * 256 + [1] * n_fill  # UNKNOWN, CONTROL, BYTE, NORMAL (llama_token_type)
    scores = [0.0] * 259 + [-float(i) for i in range(n_fill)]
    a = "llama"
    return [_kv("general.architecture", STRING, a), _kv("general.name", STRING, name), _kv("general.file_type", U32, 15),
            _kv(f"{a}.vocab_size", U32, shape.vocab), _kv(f"{a}.context_length", U32, 32768),
            _kv(f"{a}.embedding_length", U32, shape.hidden), _kv(f"{a}.block_count", U32, shape.layers),
            _kv(f"{a}.feed_forward_length", U32, shape.intermediate), _kv(f"{a}.attention.head_count", U32, shape.heads),
            _kv(f"{a}.attention.head_count_kv", U32, shape.kv_heads), _kv(f"{a}.attention.key_length", U32, shape.head_dim),
            _kv(f"{a}.attention.value_length", U32, shape.head_dim),
            _kv(f"{a}.rope.dimension_count", U32, shape.head_dim), _kv(f"{a}.rope.freq_base", F32, 1_000_000.0),
            _kv(f"{a}.attention.layer_norm_rms_epsilon", F32, 1e-6), _kv("tokenizer.ggml.model", STRING, "llama"),
            _array("tokenizer.ggml.tokens", STRING, tokens), _array("tokenizer.ggml.scores", F32, scores),
            _array("tokenizer.ggml.token_type", I32, types), _kv("tokenizer.ggml.bos_token_id", U32, 1),
            _kv("tokenizer.ggml.eos_token_id", U32, 2), _kv("tokenizer.ggml.unknown_token_id", U32, 0),
            _kv("tokenizer.ggml.add_bos_token", BOOL, True)]


class _Blocks:
    """Random blocks of one quant type with finite fp16 scales; a tensor's data is a block-aligned slice of them."""

    def __init__(self, type_name: str, seed: int, n_blocks: int = 1 << 16):
        import numpy as np  # lazy: numpy exists only where the probe builds a model

        size = BY_NAME[type_name].block_bytes
        rng = np.random.default_rng(seed)
        raw = np.frombuffer(rng.bytes(n_blocks * size), dtype=np.uint8).copy().reshape(n_blocks, size)
        for off in SCALE_OFFSETS[type_name]:
            raw[:, off:off + 2] = rng.uniform(2e-4, 6e-4, size=n_blocks).astype("<f2").view(np.uint8).reshape(n_blocks, 2)
        self.data = memoryview(raw.reshape(-1).tobytes())
        self.rng = rng
        self.size = size

    def write(self, fh: BinaryIO, n: int) -> None:
        while n:
            start = int(self.rng.integers(0, len(self.data) // self.size)) * self.size
            chunk = min(n, len(self.data) - start)
            fh.write(self.data[start:start + chunk])
            n -= chunk


@dataclass(frozen=True)
class SyntheticGguf:
    path: str
    shape: Shape
    file_bytes: int

    @property
    def label(self) -> str:
        return (f"synthetic Q4_K_M GGUF ({self.shape.layers} layers of {self.shape.hidden}/{self.shape.intermediate}, "
                f"{self.file_bytes / 1e9:.2f} GB; random values)")


def write(path: str, shape: Shape, seed: int = 27) -> SyntheticGguf:
    """Write the GGUF; returns what it holds."""
    plan = tensor_plan(shape)
    kvs = metadata(shape, f"v100-doctor-synthetic-{shape.layers}L-{shape.hidden}-{shape.intermediate}-q4_k_m")
    infos, offset = [], 0
    for name, dims, t in plan:
        infos.append(_s(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
                     + struct.pack("<IQ", BY_NAME[t].id, offset))
        offset += -(-nbytes(dims, t) // ALIGN) * ALIGN
    head = b"GGUF" + struct.pack("<IQQ", 3, len(plan), len(kvs)) + b"".join(kvs) + b"".join(infos)
    pools = {t: _Blocks(t, seed + i) for i, t in enumerate(("Q4_K", "Q6_K"))}
    ones = struct.pack("<f", 1.0) * shape.hidden
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(head + b"\0" * (-len(head) % ALIGN))
        for _, dims, t in plan:
            n = nbytes(dims, t)
            if t == "F32":
                fh.write(ones[:n])
            else:
                pools[t].write(fh, n)
            fh.write(b"\0" * (-n % ALIGN))
        size = fh.tell()
    return SyntheticGguf(path, shape, size)
