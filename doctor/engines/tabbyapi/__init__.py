"""TabbyAPI's main branch: EXL3 only (exllamav3), Ampere and newer. Its exl2-checkpoint branch is ExLlamaV2."""

from doctor.engines.tabbyapi.adapter import TabbyApiMain

ADAPTER = TabbyApiMain()
__all__ = ["ADAPTER", "TabbyApiMain"]
