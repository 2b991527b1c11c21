"""Read a GGUF file's header: version, the metadata keys that name and shape the model, and its tensor infos.

Only the header is walked (with a byte limit); tensor data is never read. The tensor infos (name,
dims, type) give every tensor's size, so llama.cpp's buffers can be predicted from the header alone
(doctor/knowledge/arithmetic/gguf_budget.py). GGUF is llama.cpp's format; ExLlamaV2 cannot load it.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any, BinaryIO

from doctor.facts.files.safe_open import open_regular
from doctor.model.ggml import GGML_TYPES
from doctor.model.gguf import GgufShape, GgufWeights
from doctor.model.model_dir import GgufFacts
from doctor.model.unknown import Unknown

MAGIC = b"GGUF"
MAX_WALK_BYTES = 64 * 1024 * 1024
MIN_TENSOR_INFO = 4 + 4 + 4 + 8  # the smallest tensor info: name length, n_dims, type, offset (v1 widths)
MIN_KV = 4 + 4 + 1  # the smallest key/value: key length, value type, a one-byte value
WANTED = ("general.architecture", "general.name", "general.file_type", "general.size_label")
# {arch}.<key>: the decoder's shape (llama.cpp src/llama-arch.cpp LLM_KV_NAMES)
SHAPE_KEYS = ("block_count", "embedding_length", "feed_forward_length", "attention.head_count",
              "attention.head_count_kv", "attention.key_length", "attention.value_length", "vocab_size",
              "context_length", "expert_count", "expert_used_count", "expert_feed_forward_length",
              "expert_shared_feed_forward_length", "expert_shared_count", "leading_dense_block_count",
              "attention.kv_lora_rank")
TOKENS_KEY = "tokenizer.ggml.tokens"  # its length is the vocabulary when {arch}.vocab_size is absent
CUDA_ALIGN = 128  # ggml-cuda buffer alignment (ggml_backend_cuda_buffer_type_get_alignment)
MATRIX_ROW_PADDING = 512  # ggml-cuda pads quantized rows to this many elements (ggml_backend_cuda_buffer_type_get_alloc_size)
FIXED = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}

# llama.cpp include/llama.h, enum llama_ftype (P): https://github.com/ggml-org/llama.cpp/blob/master/include/llama.h
FILE_TYPES = {0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K", 11: "Q3_K_S",
              12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K",
              19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S", 22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL",
              26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S", 29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16"}


class _Walker:
    def __init__(self, fh: BinaryIO, size: int):
        self.fh, self.size = fh, size

    def take(self, n: int) -> bytes:
        if self.fh.tell() + n > min(self.size, MAX_WALK_BYTES):
            raise EOFError
        data = self.fh.read(n)
        if len(data) < n:
            raise EOFError
        return data

    def fixed(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self, len_fmt: str) -> str:
        return self.take(self.fixed(len_fmt)).decode("utf-8", errors="replace")

    def array_len(self, len_fmt: str) -> int:
        """Skip an array value and return its length."""
        item, count = self.fixed("<I"), self.fixed(len_fmt)
        if item in FIXED:
            self.take(struct.calcsize(FIXED[item]) * count)
        else:
            for _ in range(count):
                self.skip_value(item, len_fmt)
        return count

    def skip_value(self, vtype: int, len_fmt: str) -> None:
        if vtype in FIXED:
            self.take(struct.calcsize(FIXED[vtype]))
        elif vtype == 8:
            self.take(self.fixed(len_fmt))
        elif vtype == 9:
            self.array_len(len_fmt)
        else:
            raise ValueError(f"unknown metadata value type {vtype}")


def is_gguf(path: Path) -> bool:
    try:
        with open_regular(path) as fh:
            return fh.read(4) == MAGIC
    except OSError:
        return False


def read_gguf(path: str | Path) -> GgufFacts:
    """Never raises: a damaged header becomes `problem` with what could be read so far."""
    p = Path(path)
    got: dict = {}
    version = tensors = kvs = Unknown("header unreadable")
    shape: GgufShape | None = None
    weights: GgufWeights | None = None
    try:
        size = p.stat().st_size
        with open_regular(p) as fh:
            w = _Walker(fh, size)
            if w.take(4) != MAGIC:
                return GgufFacts(str(p), size, version, tensors, kvs, Unknown("not GGUF"), Unknown("not GGUF"),
                                 Unknown("not GGUF"), "not a GGUF file (no GGUF magic)")
            version = w.fixed("<I")
            len_fmt = "<I" if version == 1 else "<Q"
            tensors, kvs = w.fixed(len_fmt), w.fixed(len_fmt)
            if (tensors * MIN_TENSOR_INFO + kvs * MIN_KV) > size:
                return GgufFacts(str(p), size, version, tensors, kvs, Unknown("header lies"), Unknown("header lies"),
                                 Unknown("header lies"), f"the GGUF header lies: it claims {tensors:,} tensors and {kvs:,} "
                                 f"metadata keys, which cannot fit in {size:,} bytes (corrupt or not GGUF)")
            for _ in range(kvs):
                key = w.string(len_fmt)
                vtype = w.fixed("<I")
                if (key in WANTED or _is_shape_key(key)) and vtype == 8:
                    got[key] = w.string(len_fmt)
                elif (key in WANTED or _is_shape_key(key)) and vtype in FIXED:
                    got[key] = w.fixed(FIXED[vtype])
                elif key == TOKENS_KEY and vtype == 9:
                    got[key] = w.array_len(len_fmt)
                else:
                    w.skip_value(vtype, len_fmt)
            infos = [_tensor_info(w, version, len_fmt) for _ in range(tensors)]
        problem = ""
        try:
            shape, weights = _shape(got), _weights(infos)
        except ValueError as exc:
            shape = weights = None
            problem = f"the GGUF header cannot be read: {exc}"
    except EOFError:
        size = p.stat().st_size if p.exists() else 0
        problem = "the GGUF header ends early: truncated file (re-download it)"
    except (OSError, ValueError, struct.error) as exc:
        size = 0
        problem = f"the GGUF header cannot be read: {exc}"
    ft = got.get("general.file_type")
    return GgufFacts(
        path=str(p), file_bytes=size, version=version, tensor_count=tensors, kv_count=kvs,
        architecture=got.get("general.architecture", Unknown("no general.architecture key")),
        name=got.get("general.name", Unknown("no general.name key")),
        file_type=FILE_TYPES.get(ft, f"type {ft}") if isinstance(ft, int) else Unknown("no general.file_type key"),
        problem=problem, shape=shape, weights=weights,
    )


def _is_shape_key(key: str) -> bool:
    return key.partition(".")[2] in SHAPE_KEYS


def _tensor_info(w: _Walker, version: int, len_fmt: str) -> tuple[str, tuple[int, ...], int]:
    """(name, dims in ggml order (ne0 = row length first), ggml type id); the data offset is skipped."""
    name = w.string(len_fmt)
    n_dims = w.fixed("<I")
    if n_dims > 8:
        raise ValueError(f"tensor {name!r} claims {n_dims} dimensions")
    dims = tuple(w.fixed("<I" if version == 1 else "<Q") for _ in range(n_dims))
    ttype = w.fixed("<I")
    w.take(8)  # offset of its data
    return name, dims, ttype


def _nbytes(name: str, dims: tuple[int, ...], ttype: int) -> tuple[int, int, str]:
    """(ggml_nbytes, what ggml-cuda allocates for it, type name)."""
    t = GGML_TYPES.get(ttype)
    if t is None:
        raise ValueError(f"tensor {name!r} has ggml type {ttype}, which this doctor does not know")
    ne0 = dims[0] if dims else 1
    rows = 1
    for d in dims[1:]:
        rows *= d
    if ne0 % t.block:
        raise ValueError(f"tensor {name!r}: row length {ne0} is not a multiple of {t.name}'s block of {t.block}")
    size = t.row_bytes(ne0) * rows
    alloc = size
    if t.block > 1 and ne0 % MATRIX_ROW_PADDING:
        alloc += t.row_bytes(MATRIX_ROW_PADDING - ne0 % MATRIX_ROW_PADDING)
    return size, -(-alloc // CUDA_ALIGN) * CUDA_ALIGN, t.name


def _weights(infos: list[tuple[str, tuple[int, ...], int]]) -> GgufWeights | None:
    if not infos:
        return None
    layers: dict[int, list[int]] = {}
    total = embedding = output = output_alloc = other = 0
    by_type: dict[str, int] = {}
    tied = not any(name == "output.weight" for name, _, _ in infos)
    for name, dims, ttype in infos:
        size, alloc, tname = _nbytes(name, dims, ttype)
        total += size
        by_type[tname] = by_type.get(tname, 0) + size
        if name.startswith("blk."):
            acc = layers.setdefault(int(name.split(".")[1]), [0, 0, 0])
            acc[0] += size
            if "_exps." in name:  # a routed expert tensor (ffn_gate_exps, ffn_up_exps, ffn_down_exps, ...)
                acc[2] += size
            acc[1] += alloc
        elif name == "token_embd.weight":
            embedding += size
            if tied:  # llama.cpp duplicates it as the output head, on the output layer's device
                output, output_alloc = output + size, output_alloc + alloc
        elif name.startswith("output"):
            output, output_alloc = output + size, output_alloc + alloc
        else:
            other += size
    n = max(layers) + 1 if layers else 0
    return GgufWeights(total_bytes=total, embedding_bytes=embedding, output_bytes=output, output_alloc_bytes=output_alloc,
                       layer_bytes=tuple(layers.get(i, [0, 0, 0])[0] for i in range(n)),
                       layer_alloc_bytes=tuple(layers.get(i, [0, 0, 0])[1] for i in range(n)),
                       other_bytes=other, bytes_by_type=by_type, tied_output=tied,
                       layer_expert_bytes=experts if any(experts := tuple(layers.get(i, [0, 0, 0])[2]
                                                                          for i in range(n))) else ())


def _shape(got: dict) -> GgufShape | None:
    arch = got.get("general.architecture")
    if not isinstance(arch, str):
        return None

    def key(name: str) -> int | None:
        v = got.get(f"{arch}.{name}")
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    n_layer, n_embd, n_head = key("block_count"), key("embedding_length"), key("attention.head_count")
    n_vocab = key("vocab_size") or got.get(TOKENS_KEY)
    if not (n_layer and n_embd and n_head and n_vocab):
        return None  # an architecture without these keys (per-layer arrays, encoders): no budget from the header
    head_dim = n_embd // n_head
    return GgufShape(architecture=arch, n_layer=n_layer, n_embd=n_embd, n_ff=key("feed_forward_length") or 0,
                     n_head=n_head, n_head_kv=key("attention.head_count_kv") or n_head,
                     head_dim_k=key("attention.key_length") or head_dim, head_dim_v=key("attention.value_length") or head_dim,
                     n_vocab=n_vocab, context_length=key("context_length") or 0,
                     n_expert=key("expert_count") or 0, n_expert_used=key("expert_used_count") or 0,
                     n_ff_exp=key("expert_feed_forward_length") or 0,
                     n_ff_shexp=key("expert_shared_feed_forward_length") or 0,
                     n_expert_shared=key("expert_shared_count") or 0,
                     n_leading_dense=key("leading_dense_block_count") or 0, kv_lora_rank=key("attention.kv_lora_rank") or 0)
