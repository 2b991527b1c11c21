"""How an ExLlamaV2 log shows itself (its package, TabbyAPI's exl2 branch, text-generation-webui's loader). Its fixes
are the signature table's own: the rows are written in ExLlamaV2's and torch's terms."""

from __future__ import annotations

from doctor.engines.exllamav2.adapter import ExLlamaV2
from doctor.engines.log_types import EngineLog, LogMarker

MARKERS = (
    LogMarker(r"\bexllamav2\b|\bExLlamaV2\w*|\bexllamav2_ext\b", "ExLlamaV2's own lines and paths"),
    LogMarker(r"\bTabbyAPI\b|\btabbyAPI\b|\btabbyapi-\d+ +\|", "TabbyAPI's lines", flavour="TabbyAPI"),
)

LOG = EngineLog(ExLlamaV2.id, "ExLlamaV2", MARKERS, {}, uses_torch=True, precedence=50)
