"""ExLlamaV2's batching, said once for the plan, the report, the probe and its verdict.

Its dynamic generator (what TabbyAPI serves with) batches concurrent jobs only in paged mode, which needs flash-attn
2.5.7+ (README, "New in v0.1.0"), and so a card flash-attn 2 runs on, sm_80 and newer
(doctor/knowledge/arithmetic/decode_time.py exl2_flash_attn). Unpaged, "the max supported batch size is 1"
(generator/dynamic.py's docstring, 0.3.2): the jobs take turns. Measured on an H200 without flash-attn: the totals
stayed within -3..+6% of one job's while the first tokens queued (benchmarks/results/issue38-streams/README.md).
"""

from __future__ import annotations

DYNAMIC_PY = "https://github.com/turboderp-org/exllamav2/blob/v0.3.2/exllamav2/generator/dynamic.py"
EXL2_README = "https://github.com/turboderp-org/exllamav2/blob/master/README.md (New in v0.1.0)"
PAGED_SINCE = "2.5.7"  # the first flash-attn with paged attention, which ExLlamaV2's paged mode calls

TAKE_TURNS = ("ExLlamaV2's dynamic generator (TabbyAPI) without flash-attn runs unpaged, where 'the max supported batch "
              f"size is 1' ({DYNAMIC_PY}): the jobs take turns")

# The fix, by what the card can do: install flash-attn where it runs, llama.cpp's parallel slots where it cannot,
# both where the card is not known.
INSTALL_FIX = (f"ExLlamaV2 batches only in paged mode: install flash-attn {PAGED_SINCE} or newer (a build for this "
               "torch) and its dynamic generator runs paged, the cache holding N x the context per stream")
OLD_CARD_FIX = ("flash-attn 2 needs sm_80 or newer, so on this card ExLlamaV2's jobs queue; llama.cpp's server "
                "batches its parallel slots")
EITHER_FIX = (f"ExLlamaV2 batches only in paged mode: flash-attn {PAGED_SINCE} or newer, on sm_80 and newer cards; on "
              "older cards llama.cpp's server batches its parallel slots")


def paging_fix(can_page: bool | None) -> str:
    """The one sentence for ExLlamaV2's jobs taking turns: can_page is whether flash-attn 2 runs on the card (None:
    the card is not known)."""
    if can_page is None:
        return EITHER_FIX
    return INSTALL_FIX if can_page else OLD_CARD_FIX
