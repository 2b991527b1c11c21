"""KV-cache element sizes per cache mode, as ExLlamaV2 0.3.2 allocates them.

E = num_key_value_heads x head_dim: the K (or V) elements of one token in one layer.
"""

from __future__ import annotations

from dataclasses import dataclass

CACHE_PY = "https://github.com/turboderp-org/exllamav2/blob/v0.3.2/exllamav2/cache.py"


@dataclass(frozen=True)
class KvCacheMode:
    key: str  # what --cache-mode accepts
    exllamav2_class: str
    bytes_per_e: float  # bytes per token per layer, in units of E (K + V + scales)
    fp16_scratch_pair: bool  # one full-length FP16 K/V pair per device, to dequantize into
    what: str
    source: str
    confidence: str

    def bytes_per_token_layer(self, kv_heads: int, head_dim: int) -> int:
        """Bytes the cache stores per token in one layer: bytes_per_e x E (K, V and their scales)."""
        return int(round(self.bytes_per_e * kv_heads * head_dim))

    def bytes_per_token(self, layers: int, kv_heads: int, head_dim: int) -> int:
        """Bytes the cache stores per token over all layers: the one KV-per-token formula (budget, probe, fixtures)."""
        return layers * self.bytes_per_token_layer(kv_heads, head_dim)

    def decode_read_per_past_token_layer(self, kv_heads: int, head_dim: int) -> int:
        """Bytes moved per past token per layer at one decode step (non-paged path).

        FP16 is read once by attention. The other modes read their own bytes, write the whole past
        into the FP16 scratch (4E) and attention reads that again (4E): exllamav2 cache.get_kv_state.
        """
        own = self.bytes_per_token_layer(kv_heads, head_dim)
        return own + (8 * kv_heads * head_dim if self.fp16_scratch_pair else 0)


KV_CACHE_MODES: dict[str, KvCacheMode] = {m.key: m for m in (
    KvCacheMode("fp16", "ExLlamaV2Cache", 4.0, False, "FP16 K and V: 2E + 2E",
                CACHE_PY + " (ExLlamaV2Cache: torch.half, weights_per_element 1, 1)", "P"),
    KvCacheMode("fp8", "ExLlamaV2Cache_8bit", 2.0, True, "FP8 E5M2 K and V (top byte of FP16): E + E",
                CACHE_PY + " (ExLlamaV2Cache_8bit: torch.uint8; temp_tensors FP16 pair per device)", "P"),
    KvCacheMode("q8", "ExLlamaV2Cache_Q8", 2.125, True, "8-bit K and V plus one FP16 scale per 32 values: E + E + E/8",
                CACHE_PY + " (ExLlamaV2Cache_Q8: weights_per_byte 1, 1; shape_s = head_dim // 32 FP16 scales for K and V)", "P"),
    KvCacheMode("q6", "ExLlamaV2Cache_Q6", 1.625, True, "8-bit K, 4-bit V plus scales: E + E/2 + E/8",
                CACHE_PY + " (ExLlamaV2Cache_Q6: weights_per_byte 1, 2)", "P"),
    KvCacheMode("q4", "ExLlamaV2Cache_Q4", 1.125, True, "4-bit K and V plus scales: E/2 + E/2 + E/8",
                CACHE_PY + " (ExLlamaV2Cache_Q4: weights_per_byte 2, 2)", "P"),
)}

CACHE_MODE_ORDER = ("fp16", "fp8", "q8", "q6", "q4")

SCRATCH_PAIR_SOURCE = (CACHE_PY + " (touch_device: temp_tensors[device] = two torch.zeros(shape_basic, float16), "
                       "shape_basic = (batch, max_seq_len, kv_heads, head_dim))")
DECODE_TRAFFIC_SOURCE = ("https://github.com/turboderp-org/exllamav2/blob/v0.3.2/exllamav2/attn.py (non-paged forward: "
                         "cache.get_kv_state(layer, bsz, 0, past_len) dequantizes the whole past into the FP16 scratch "
                         "every step; read in ../shared/notes/exllamav2-research.md §2.4)")
SLIDING_WINDOW_NOTE = ("ExLlamaV2 0.3.2 allocates every layer's cache at the full max_seq_len, sliding-window layers "
                       "included (cache.py shapes use max_seq_len for all num_hidden_layers)", CACHE_PY, "P")
