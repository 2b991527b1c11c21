"""ggml's tensor types: id, name, elements per block and bytes per block.

One table, used by the GGUF header reader (tensor sizes without reading data) and by the GGUF
budget (K/V cache rows). Source: ggml/src/ggml.c type_traits and gguf-py's GGML_QUANT_SIZES
(https://github.com/ggml-org/llama.cpp/blob/master/gguf-py/gguf/constants.py), checked against
gguf 0.19.0.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GgmlType:
    id: int
    name: str
    block: int  # elements per block
    block_bytes: int

    @property
    def quantized(self) -> bool:
        return self.block > 1 or self.name in ("I8",)

    def row_bytes(self, n: int) -> int:
        """Bytes of `n` consecutive elements (n a multiple of the block), as ggml_row_size."""
        return n // self.block * self.block_bytes


_ROWS = (
    (0, "F32", 1, 4), (1, "F16", 1, 2), (2, "Q4_0", 32, 18), (3, "Q4_1", 32, 20), (6, "Q5_0", 32, 22),
    (7, "Q5_1", 32, 24), (8, "Q8_0", 32, 34), (9, "Q8_1", 32, 40), (10, "Q2_K", 256, 84), (11, "Q3_K", 256, 110),
    (12, "Q4_K", 256, 144), (13, "Q5_K", 256, 176), (14, "Q6_K", 256, 210), (15, "Q8_K", 256, 292),
    (16, "IQ2_XXS", 256, 66), (17, "IQ2_XS", 256, 74), (18, "IQ3_XXS", 256, 98), (19, "IQ1_S", 256, 50),
    (20, "IQ4_NL", 32, 18), (21, "IQ3_S", 256, 110), (22, "IQ2_S", 256, 82), (23, "IQ4_XS", 256, 136),
    (24, "I8", 1, 1), (25, "I16", 1, 2), (26, "I32", 1, 4), (27, "I64", 1, 8), (28, "F64", 1, 8),
    (29, "IQ1_M", 256, 56), (30, "BF16", 1, 2), (34, "TQ1_0", 256, 54), (35, "TQ2_0", 256, 66),
    (39, "MXFP4", 32, 17),
)
GGML_TYPES: dict[int, GgmlType] = {r[0]: GgmlType(*r) for r in _ROWS}
BY_NAME: dict[str, GgmlType] = {t.name: t for t in GGML_TYPES.values()}


def ggml_type(name: str) -> GgmlType:
    """The type named `name` ("q8_0", "F16"); raises KeyError naming the known ones."""
    try:
        return BY_NAME[name.upper()]
    except KeyError:
        raise KeyError(f"unknown ggml type {name!r}; one of {', '.join(sorted(BY_NAME))}") from None


# the K/V cache types llama.cpp accepts for --cache-type-k/-v (common/arg.cpp kv_cache_types)
KV_CACHE_TYPES = ("f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1")
