"""How TabbyAPI's main branch shows itself in a log: ExLlamaV3 (EXL3). Its fixes are the signature table's own."""

from __future__ import annotations

from doctor.engines.log_types import EngineLog, LogMarker
from doctor.engines.tabbyapi.adapter import TabbyApiMain

MARKERS = (LogMarker(r"\bexllamav3\b|\bExllamaV3\b|\bExLlamaV3\b", "ExLlamaV3 (TabbyAPI main) lines", decisive=True),)

LOG = EngineLog(TabbyApiMain.id, "TabbyAPI (main branch, ExLlamaV3)", MARKERS, {}, uses_torch=True, precedence=40)
