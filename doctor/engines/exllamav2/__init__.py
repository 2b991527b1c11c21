"""ExLlamaV2 0.3.2 (EXL2 and GPTQ), run from Python or served by TabbyAPI's exl2-checkpoint branch."""

from doctor.engines.exllamav2.adapter import ExLlamaV2

ADAPTER = ExLlamaV2()
__all__ = ["ADAPTER", "ExLlamaV2"]
